// Package sasl implements the DIGEST-MD5 mechanism (RFC 2831) the way Hadoop uses it for
// token authentication: md5-sess, qop "auth" only, realm "default", digest-uri
// "/default". It is pure computation over byte strings; the IPC layer carries the bytes.
// See protocol.md §2.2.
package sasl

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Hadoop's fixed DIGEST-MD5 parameters.
const (
	DefaultRealm = "default"
	// DefaultDigestURI is protocol "/" serverId with Hadoop's empty protocol.
	DefaultDigestURI = "/default"
	Mechanism        = "DIGEST-MD5"
)

// ErrAuthFailed is returned for a response that does not prove the password.
var ErrAuthFailed = errors.New("DIGEST-MD5: digest response format violation. Mismatched response.")

// maxMessage bounds DIGEST-MD5 messages (RFC 2831 allows 2048 bytes for the challenge and
// 4096 for the response).
const maxMessage = 4096

// Directives are the key/value pairs of a challenge or response.
type Directives map[string]string

// ParseDirectives parses `key=value` and `key="quoted\"value"` pairs separated by commas,
// as RFC 2831 §7.1 describes. A repeated key is an error (RFC 2831 forbids most repeats and
// Bobbin has no use for the ones it allows).
func ParseDirectives(s []byte) (Directives, error) {
	if len(s) > maxMessage {
		return nil, fmt.Errorf("DIGEST-MD5: message of %d bytes exceeds %d", len(s), maxMessage)
	}
	d := Directives{}
	i := 0
	skipSpace := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n') {
			i++
		}
	}
	for {
		skipSpace()
		for i < len(s) && s[i] == ',' { // empty list elements are allowed
			i++
			skipSpace()
		}
		if i >= len(s) {
			return d, nil
		}
		start := i
		for i < len(s) && s[i] != '=' && s[i] != ',' && s[i] != ' ' && s[i] != '\t' {
			i++
		}
		key := asciiLower(string(s[start:i]))
		if key == "" {
			return nil, fmt.Errorf("DIGEST-MD5: empty directive name at offset %d", start)
		}
		skipSpace()
		if i >= len(s) || s[i] != '=' {
			return nil, fmt.Errorf("DIGEST-MD5: directive %q has no value", key)
		}
		i++
		skipSpace()
		var val strings.Builder
		if i < len(s) && s[i] == '"' {
			i++
			closed := false
			for i < len(s) {
				c := s[i]
				i++
				if c == '\\' && i < len(s) {
					val.WriteByte(s[i])
					i++
					continue
				}
				if c == '"' {
					closed = true
					break
				}
				val.WriteByte(c)
			}
			if !closed {
				return nil, fmt.Errorf("DIGEST-MD5: unterminated quoted value for %q", key)
			}
		} else {
			start := i
			for i < len(s) && s[i] != ',' && s[i] != ' ' && s[i] != '\t' {
				i++
			}
			val.Write(s[start:i])
		}
		if _, dup := d[key]; dup {
			return nil, fmt.Errorf("DIGEST-MD5: duplicate directive %q", key)
		}
		d[key] = val.String()
		skipSpace()
		if i < len(s) && s[i] != ',' {
			return nil, fmt.Errorf("DIGEST-MD5: expected ',' after %q at offset %d", key, i)
		}
	}
}

func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

func md5hex(s string) string {
	h := md5.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// ha1 is hex(MD5(MD5_raw(user:realm:password) ":" nonce ":" cnonce)), md5-sess without authzid.
func ha1(user, realm, password, nonce, cnonce string) string {
	inner := md5.Sum([]byte(user + ":" + realm + ":" + password))
	return md5hex(string(inner[:]) + ":" + nonce + ":" + cnonce)
}

// ResponseValue computes the "response" directive (a2Prefix "AUTHENTICATE") or the
// rspauth value (a2Prefix ""), qop auth.
func ResponseValue(user, realm, password, nonce, nc, cnonce, digestURI, a2Prefix string) string {
	a2 := md5hex(a2Prefix + ":" + digestURI)
	return md5hex(ha1(user, realm, password, nonce, cnonce) + ":" + nonce + ":" + nc + ":" + cnonce + ":auth:" + a2)
}

func newNonce() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err)) // the OS RNG never fails on Linux
	}
	return base64.StdEncoding.EncodeToString(b)
}

// Server is one server-side DIGEST-MD5 exchange.
type Server struct {
	Realm     string
	DigestURI string
	nonce     string
}

// NewServer starts an exchange with a fresh random nonce.
func NewServer() *Server {
	return &Server{Realm: DefaultRealm, DigestURI: DefaultDigestURI, nonce: newNonce()}
}

// NewServerWithNonce starts an exchange with a fixed nonce (known-answer tests).
func NewServerWithNonce(nonce string) *Server {
	return &Server{Realm: DefaultRealm, DigestURI: DefaultDigestURI, nonce: nonce}
}

// Challenge is the first server message, in the JDK's order.
func (s *Server) Challenge() []byte {
	return []byte(`realm=` + quote(s.Realm) + `,nonce=` + quote(s.nonce) + `,qop="auth",charset=utf-8,algorithm=md5-sess`)
}

// PasswordFunc returns the DIGEST-MD5 password for a user name (for Hadoop tokens: the
// base64 token password for the base64 identifier) or an error to refuse it.
type PasswordFunc func(username string) (string, error)

// Verify checks a client response and returns the user name it authenticated and the
// server's final message ("rspauth=<hex>"). Errors from password are returned wrapped.
func (s *Server) Verify(response []byte, password PasswordFunc) (user string, final []byte, err error) {
	d, err := ParseDirectives(response)
	if err != nil {
		return "", nil, err
	}
	for _, k := range []string{"username", "nonce", "cnonce", "nc", "response", "digest-uri"} {
		if d[k] == "" {
			return "", nil, fmt.Errorf("DIGEST-MD5: response lacks %s", k)
		}
	}
	if qop, ok := d["qop"]; ok && qop != "auth" {
		return "", nil, fmt.Errorf("DIGEST-MD5: unsupported qop %q", qop)
	}
	if cs, ok := d["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return "", nil, fmt.Errorf("DIGEST-MD5: unsupported charset %q", cs)
	}
	if realm, ok := d["realm"]; ok && realm != s.Realm {
		return "", nil, fmt.Errorf("DIGEST-MD5: realm %q is not %q", realm, s.Realm)
	}
	if d["nonce"] != s.nonce {
		return "", nil, errors.New("DIGEST-MD5: nonce does not match the challenge")
	}
	if d["nc"] != "00000001" {
		return "", nil, fmt.Errorf("DIGEST-MD5: nonce count %q is not 00000001", d["nc"])
	}
	if d["digest-uri"] != s.DigestURI {
		return "", nil, fmt.Errorf("DIGEST-MD5: digest-uri %q is not %q", d["digest-uri"], s.DigestURI)
	}
	if _, ok := d["authzid"]; ok && d["authzid"] != d["username"] {
		return "", nil, errors.New("DIGEST-MD5: authzid differs from username")
	}
	user = d["username"]
	pw, err := password(user)
	if err != nil {
		return "", nil, err
	}
	want := ResponseValue(user, s.Realm, pw, s.nonce, d["nc"], d["cnonce"], s.DigestURI, "AUTHENTICATE")
	if subtle.ConstantTimeCompare([]byte(want), []byte(strings.ToLower(d["response"]))) != 1 {
		return "", nil, ErrAuthFailed
	}
	rsp := ResponseValue(user, s.Realm, pw, s.nonce, d["nc"], d["cnonce"], s.DigestURI, "")
	return user, []byte("rspauth=" + rsp), nil
}

// Client is one client-side DIGEST-MD5 exchange.
type Client struct {
	User, Password, DigestURI string
	// CNonce may be preset (tests); otherwise it is random.
	CNonce  string
	rspauth string
}

// Respond answers a server challenge.
func (c *Client) Respond(challenge []byte) ([]byte, error) {
	d, err := ParseDirectives(challenge)
	if err != nil {
		return nil, err
	}
	if !strings.EqualFold(d["algorithm"], "md5-sess") {
		return nil, fmt.Errorf("DIGEST-MD5: server algorithm %q is not md5-sess", d["algorithm"])
	}
	if d["nonce"] == "" {
		return nil, errors.New("DIGEST-MD5: challenge has no nonce")
	}
	if qop, ok := d["qop"]; ok && !containsToken(qop, "auth") {
		return nil, fmt.Errorf("DIGEST-MD5: server offers qop %q, not auth", qop)
	}
	realm := d["realm"]
	if c.CNonce == "" {
		c.CNonce = newNonce()
	}
	uri := c.DigestURI
	if uri == "" {
		uri = DefaultDigestURI
	}
	const nc = "00000001"
	resp := ResponseValue(c.User, realm, c.Password, d["nonce"], nc, c.CNonce, uri, "AUTHENTICATE")
	c.rspauth = ResponseValue(c.User, realm, c.Password, d["nonce"], nc, c.CNonce, uri, "")
	return []byte(`charset=utf-8,username=` + quote(c.User) + `,realm=` + quote(realm) + `,nonce=` + quote(d["nonce"]) +
		`,nc=` + nc + `,cnonce=` + quote(c.CNonce) + `,digest-uri=` + quote(uri) + `,maxbuf=65536,response=` + resp + `,qop=auth`), nil
}

// VerifyFinal checks the server's "rspauth=..." message, proving the server knew the password.
func (c *Client) VerifyFinal(final []byte) error {
	d, err := ParseDirectives(final)
	if err != nil {
		return err
	}
	if c.rspauth == "" || subtle.ConstantTimeCompare([]byte(d["rspauth"]), []byte(c.rspauth)) != 1 {
		return errors.New("DIGEST-MD5: server rspauth does not match")
	}
	return nil
}

func containsToken(list, tok string) bool {
	for _, t := range strings.Split(list, ",") {
		if strings.TrimSpace(t) == tok {
			return true
		}
	}
	return false
}

// asciiLower lower-cases ASCII letters only: directive names are ASCII tokens, and
// strings.ToLower would rewrite invalid UTF-8 bytes.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
