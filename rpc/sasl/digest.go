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

// ha1Raw is MD5(MD5_raw(user:realm:password) ":" nonce ":" cnonce), md5-sess without
// authzid: H(A1), whose hex enters the response and whose bytes key the security layer.
func ha1Raw(user, realm, password, nonce, cnonce string) [16]byte {
	inner := md5.Sum([]byte(user + ":" + realm + ":" + password))
	return md5.Sum([]byte(string(inner[:]) + ":" + nonce + ":" + cnonce))
}

// responseQOP computes the "response" directive (a2Prefix "AUTHENTICATE") or the rspauth
// value (a2Prefix ""): with auth-int and auth-conf, A2 ends with
// ":00000000000000000000000000000000" (RFC 2831 §2.1.2.1).
func responseQOP(user, realm, password, nonce, nc, cnonce, digestURI, a2Prefix, qop string) string {
	a2 := a2Prefix + ":" + digestURI
	if qop != "auth" {
		a2 += ":00000000000000000000000000000000"
	}
	h := ha1Raw(user, realm, password, nonce, cnonce)
	return md5hex(hex.EncodeToString(h[:]) + ":" + nonce + ":" + nc + ":" + cnonce + ":" + qop + ":" + md5hex(a2))
}

// qopNames are the DIGEST-MD5 names of the QOP masks, strongest first.
var qopNames = []struct {
	mask byte
	name string
}{{QOPPrivacy, "auth-conf"}, {QOPIntegrity, "auth-int"}, {QOPAuth, "auth"}}

// qopList is mask's names, strongest first, comma-separated.
func qopList(mask byte) string {
	var names []string
	for _, q := range qopNames {
		if mask&q.mask != 0 {
			names = append(names, q.name)
		}
	}
	return strings.Join(names, ",")
}

func qopMask(name string) byte {
	for _, q := range qopNames {
		if q.name == name {
			return q.mask
		}
	}
	return 0
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
	// QOP is the protections offered (hadoop.rpc.protection; 0 means authentication).
	QOP   byte
	nonce string
	layer *DigestLayer
}

// Layer is the security layer the client chose (nil for auth), once Verify succeeded.
func (s *Server) Layer() *DigestLayer { return s.layer }

func (s *Server) offered() byte {
	if s.QOP == 0 {
		return QOPAuth
	}
	return s.QOP
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
	// The JDK's order; maxbuf is left out (65536, the default), the ciphers are listed
	// only when privacy is offered.
	qop := s.offered()
	ciphers := ""
	if qop&QOPPrivacy != 0 {
		ciphers = `,cipher=` + quote(strings.Join(digestCiphers, ","))
	}
	return []byte(`realm=` + quote(s.Realm) + `,nonce=` + quote(s.nonce) + `,qop=` + quote(qopList(qop)) + `,charset=utf-8` + ciphers + `,algorithm=md5-sess`)
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
	offered := s.offered()
	qop := "auth"
	if q, ok := d["qop"]; ok {
		qop = q
	}
	if m := qopMask(qop); m == 0 || offered&m == 0 {
		return "", nil, fmt.Errorf("DIGEST-MD5: server does not support  qop: %s", qop)
	}
	cipherName := ""
	if qop == "auth-conf" {
		if cipherName = d["cipher"]; cipherName == "" {
			return "", nil, errors.New("DIGEST-MD5: digest response format violation. No cipher specified.")
		}
		if !containsToken(strings.Join(digestCiphers, ","), cipherName) {
			return "", nil, fmt.Errorf("DIGEST-MD5: server does not support cipher: %s", cipherName)
		}
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
	want := responseQOP(user, s.Realm, pw, s.nonce, d["nc"], d["cnonce"], s.DigestURI, "AUTHENTICATE", qop)
	if subtle.ConstantTimeCompare([]byte(want), []byte(strings.ToLower(d["response"]))) != 1 {
		return "", nil, ErrAuthFailed
	}
	rsp := responseQOP(user, s.Realm, pw, s.nonce, d["nc"], d["cnonce"], s.DigestURI, "", qop)
	if qop != "auth" {
		if s.layer, err = newDigestLayer(ha1Raw(user, s.Realm, pw, s.nonce, d["cnonce"]), false, cipherName); err != nil {
			return "", nil, err
		}
	}
	return user, []byte("rspauth=" + rsp), nil
}

// Client is one client-side DIGEST-MD5 exchange.
type Client struct {
	User, Password, DigestURI string
	// CNonce may be preset (tests); otherwise it is random.
	CNonce string
	// QOP is the protections this side accepts (0 means authentication); the strongest the
	// server also offers is chosen.
	QOP     byte
	rspauth string
	chosen  string
	cipher  string
	key     [16]byte
}

// Layer is the security layer chosen (nil for auth), once VerifyFinal succeeded.
func (c *Client) Layer() (*DigestLayer, error) {
	if c.chosen == "" || c.chosen == "auth" {
		return nil, nil
	}
	return newDigestLayer(c.key, true, c.cipher)
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
	offered := "auth"
	if q, ok := d["qop"]; ok {
		offered = q
	}
	allow := c.QOP
	if allow == 0 {
		allow = QOPAuth
	}
	qop := ""
	for _, q := range qopNames {
		if allow&q.mask != 0 && containsToken(offered, q.name) {
			qop = q.name
			break
		}
	}
	if qop == "" {
		return nil, fmt.Errorf("DIGEST-MD5: No common protection layer between client and server (server offers %q)", offered)
	}
	cipherDirective := ""
	if qop == "auth-conf" {
		list, ok := d["cipher"]
		if !ok {
			return nil, errors.New("DIGEST-MD5: server did not specify cipher to use for 'auth-conf'")
		}
		for _, name := range digestCiphers {
			if containsToken(list, name) {
				c.cipher = name
				break
			}
		}
		if c.cipher == "" {
			return nil, fmt.Errorf("DIGEST-MD5: Client supports none of these cipher suites: %s", list)
		}
		cipherDirective = `,cipher=` + quote(c.cipher)
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
	resp := responseQOP(c.User, realm, c.Password, d["nonce"], nc, c.CNonce, uri, "AUTHENTICATE", qop)
	c.rspauth = responseQOP(c.User, realm, c.Password, d["nonce"], nc, c.CNonce, uri, "", qop)
	c.chosen, c.key = qop, ha1Raw(c.User, realm, c.Password, d["nonce"], c.CNonce)
	return []byte(`charset=utf-8,username=` + quote(c.User) + `,realm=` + quote(realm) + `,nonce=` + quote(d["nonce"]) +
		`,nc=` + nc + `,cnonce=` + quote(c.CNonce) + `,digest-uri=` + quote(uri) + `,maxbuf=65536,response=` + resp + `,qop=` + qop + cipherDirective), nil
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
