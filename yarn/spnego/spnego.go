// Package spnego is Kerberos authentication on the daemons' web ports
// (hadoop.http.authentication.type=kerberos), as Hadoop's AuthenticationFilter with its
// KerberosAuthenticationHandler serves it: a caller without credentials gets 401 with
// "WWW-Authenticate: Negotiate"; one whose SPNEGO token verifies against the HTTP
// principal's keytab is the principal's short name (hadoop.security.auth_to_local) and
// gets a signed "hadoop.auth" cookie that spares it the next negotiations until it
// expires. The authenticated name replaces any user.name in the query, which the pages
// and REST handlers read as the caller.
package spnego

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jcmturner/goidentity/v6"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/service"
	gokrbspnego "github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/sirupsen/logrus"

	"github.com/bobbin-yarn/bobbin/yarn/webuser"
)

// CookieName is Hadoop's authentication cookie.
const CookieName = "hadoop.auth"

// Options configure a Filter.
type Options struct {
	Keytab *keytab.Keytab
	// Principal is the HTTP service principal without realm (HTTP/host).
	Principal string
	// ShortName maps an authenticated principal (name@REALM) to a user name.
	ShortName func(principal string) (string, error)
	// Validity is how long the cookie spares negotiation
	// (hadoop.http.authentication.token.validity, 10 h by default).
	Validity time.Duration
	Now      func() time.Time
	Log      *logrus.Entry
}

// Filter authenticates every request before next sees it.
type Filter struct {
	opts   Options
	next   http.Handler
	secret []byte
	krb    http.Handler
}

// New wraps next.
func New(next http.Handler, o Options) *Filter {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Validity <= 0 {
		o.Validity = 10 * time.Hour
	}
	if o.Log == nil {
		o.Log = logrus.NewEntry(logrus.StandardLogger())
	}
	f := &Filter{opts: o, next: next, secret: make([]byte, 32)}
	rand.Read(f.secret) // never fails on Linux
	f.krb = gokrbspnego.SPNEGOKRB5Authenticate(http.HandlerFunc(f.authenticated), o.Keytab,
		service.KeytabPrincipal(o.Principal), service.DecodePAC(false))
	return f
}

func (f *Filter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if user, principal, ok := f.fromCookie(r); ok {
		f.serve(w, r, user, principal)
		return
	}
	f.krb.ServeHTTP(w, r)
}

// authenticated runs after gokrb5 verified the SPNEGO token.
func (f *Filter) authenticated(w http.ResponseWriter, r *http.Request) {
	id := goidentity.FromHTTPRequestContext(r)
	if id == nil || !id.Authenticated() {
		http.Error(w, "Authentication required", http.StatusUnauthorized)
		return
	}
	principal := id.UserName() + "@" + id.Domain()
	user, err := f.opts.ShortName(principal)
	if err != nil {
		f.opts.Log.WithError(err).WithField("principal", principal).Warn("web caller's principal not mapped to a user")
		http.Error(w, "Authentication failed: "+err.Error(), http.StatusForbidden)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: f.sign(user, principal), Path: "/", HttpOnly: true})
	f.serve(w, r, user, principal)
}

// serve hands the request on with the authenticated user as user.name.
func (f *Filter) serve(w http.ResponseWriter, r *http.Request, user, principal string) {
	r2 := webuser.Proven(r.Clone(r.Context()), user)
	q := r2.URL.Query()
	q.Set("user.name", user)
	r2.URL.RawQuery = q.Encode()
	f.next.ServeHTTP(w, r2)
}

// sign is Hadoop's token form, u=…&p=…&t=kerberos&e=…, with an HMAC of it.
func (f *Filter) sign(user, principal string) string {
	v := url.Values{}
	v.Set("u", user)
	v.Set("p", principal)
	v.Set("t", "kerberos")
	v.Set("e", strconv.FormatInt(f.opts.Now().Add(f.opts.Validity).UnixMilli(), 10))
	payload := v.Encode()
	m := hmac.New(sha256.New, f.secret)
	m.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (f *Filter) fromCookie(r *http.Request) (user, principal string, ok bool) {
	c, err := r.Cookie(CookieName)
	if err != nil {
		return "", "", false
	}
	p64, s64, found := strings.Cut(c.Value, ".")
	if !found {
		return "", "", false
	}
	payload, err1 := base64.RawURLEncoding.DecodeString(p64)
	sig, err2 := base64.RawURLEncoding.DecodeString(s64)
	if err1 != nil || err2 != nil {
		return "", "", false
	}
	m := hmac.New(sha256.New, f.secret)
	m.Write(payload)
	if !hmac.Equal(sig, m.Sum(nil)) {
		return "", "", false
	}
	v, err := url.ParseQuery(string(payload))
	if err != nil {
		return "", "", false
	}
	exp, err := strconv.ParseInt(v.Get("e"), 10, 64)
	if err != nil || f.opts.Now().UnixMilli() > exp || v.Get("u") == "" {
		return "", "", false
	}
	return v.Get("u"), v.Get("p"), true
}

// String names the filter for logs.
func (f *Filter) String() string { return fmt.Sprintf("SPNEGO as %s", f.opts.Principal) }
