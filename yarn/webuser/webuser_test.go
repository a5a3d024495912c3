package webuser

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/bobbin-yarn/bobbin/conf"
)

// Who a caller is and what it may do, for each mode Hadoop's filters have.
func TestCallersByMode(t *testing.T) {
	serve := func(p *Policy, method, target string, proven string) (int, Caller, string) {
		var got Caller
		var q string
		h := p.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got, q = From(r), r.URL.Query().Get("user.name")
		}))
		r := httptest.NewRequest(method, target, nil)
		if proven != "" {
			r = Proven(r, proven)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec.Code, got, q
	}
	read := func(kv ...string) *Policy {
		c := conf.New()
		for i := 0; i+1 < len(kv); i += 2 {
			c.Set(kv[i], kv[i+1])
		}
		p, err := Read(c, func(u string) bool { return u == "yarn" }, nil)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	simple := read()
	if code, c, q := serve(simple, "POST", "/ws/v1/cluster/apps?user.name=alice", ""); code != 200 || c != (Caller{"alice", true}) || q != "alice" {
		t.Errorf("simple, named: %d %+v %q", code, c, q)
	}
	if code, c, _ := serve(simple, "GET", "/ws/v1/cluster/apps", ""); code != 200 || c != (Caller{"dr.who", false}) {
		t.Errorf("simple, anonymous: %d %+v", code, c)
	}
	if code, _, _ := serve(read("hadoop.http.authentication.simple.anonymous.allowed", "false"), "GET", "/ws/v1/cluster/apps", ""); code != 403 {
		t.Errorf("anonymous disallowed: %d", code)
	}
	secure := read("hadoop.security.authentication", "kerberos", "hadoop.http.staticuser.user", "webuser")
	if code, c, q := serve(secure, "GET", "/ws/v1/cluster/apps?user.name=alice", ""); code != 200 || c != (Caller{"webuser", false}) || q != "" {
		t.Errorf("kerberized, user.name: %d %+v %q", code, c, q)
	}
	for _, m := range []string{"POST", "PUT", "DELETE"} {
		if code, _, _ := serve(secure, m, "/ws/v1/cluster/apps?user.name=alice", ""); code != 403 {
			t.Errorf("kerberized, unauthenticated %s: %d", m, code)
		}
	}
	if code, c, q := serve(secure, "PUT", "/ws/v1/cluster/apps/x/state?user.name=mallory", "alice"); code != 200 || c != (Caller{"alice", true}) || q != "alice" {
		t.Errorf("kerberized, SPNEGO: %d %+v %q", code, c, q)
	}

	admin := func(p *Policy, target, proven string) int {
		h := p.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if p.AdminAccess(w, r) {
				w.WriteHeader(200)
			}
		}))
		r := httptest.NewRequest("GET", target, nil)
		if proven != "" {
			r = Proven(r, proven)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec.Code
	}
	authz := read("hadoop.security.authorization", "true")
	for target, want := range map[string]int{"/logLevel?user.name=yarn": 200, "/logLevel?user.name=bob": 403, "/logLevel": 403} {
		if code := admin(authz, target, ""); code != want {
			t.Errorf("authorization on, %s: %d, want %d", target, code, want)
		}
	}
	if code := admin(simple, "/logLevel?user.name=bob", ""); code != 200 {
		t.Errorf("authorization off: %d", code)
	}
	if code := admin(secure, "/logLevel?user.name=yarn", ""); code != 403 {
		t.Errorf("kerberized, unauthenticated: %d", code)
	}
	if code := admin(secure, "/logLevel", "yarn"); code != 200 {
		t.Errorf("kerberized, SPNEGO: %d", code)
	}
}
