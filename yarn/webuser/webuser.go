// Package webuser decides who calls a daemon's web port and what an unauthenticated
// caller may do, as Hadoop's web filters and servlets decide it:
//
//   - With SPNEGO (hadoop.http.authentication.type=kerberos) the caller is the
//     authenticated principal's short name (yarn/spnego marks the request).
//   - With simple HTTP authentication on a cluster whose RPC is simple too, the caller is
//     the pseudo user.name of the query (PseudoAuthenticationHandler), or, without one,
//     the static user (hadoop.http.staticuser.user, dr.who), unless
//     hadoop.http.authentication.simple.anonymous.allowed is false, which refuses it.
//   - With Kerberos RPC (UserGroupInformation.isSecurityEnabled) and simple HTTP, a
//     user.name proves nothing: every caller is the static user, unauthenticated. It may
//     change nothing through the REST API ("The default static user cannot carry out
//     this operation.", as RMWebServices answers), and the ACLs it is held to do not
//     name it.
//
// The filter rewrites user.name to the caller it decided (removing it for an
// unauthenticated caller), so every handler that reads user.name reads the decided
// caller, and puts the Caller in the request's context for From.
//
// Administrator pages follow HttpServer2: /logLevel needs administrator access, and
// /jmx, /conf, /stacks and /prom need it with
// hadoop.security.instrumentation.requires.admin. Administrator access is everybody's
// without hadoop.security.authorization; with it, the caller must be authenticated and
// in the daemon's administrator ACL (yarn.admin.acl). An unauthenticated caller of a
// kerberized cluster never has it.
package webuser

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/sirupsen/logrus"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/yarn/kerberos"
)

// Caller is who made a web request.
type Caller struct {
	Name string
	// Authenticated: the name was proven (SPNEGO) or is taken as said (simple HTTP
	// authentication on a cluster whose RPC is simple). False for the static user.
	Authenticated bool
}

// Policy is how a daemon's web port names its callers and guards its administrator pages.
type Policy struct {
	SecureRPC        bool   // hadoop.security.authentication=kerberos
	StaticUser       string // hadoop.http.staticuser.user
	AnonymousAllowed bool   // hadoop.http.authentication.simple.anonymous.allowed
	// Authorization is hadoop.security.authorization: administrator pages check IsAdmin.
	Authorization bool
	// InstrumentationAdmin is hadoop.security.instrumentation.requires.admin.
	InstrumentationAdmin bool
	// IsAdmin says whether a user is in the daemon's administrator ACL (yarn.admin.acl).
	IsAdmin func(user string) bool
	Log     *logrus.Entry
}

// Read reads the keys of the policy; isAdmin is the daemon's administrator ACL.
func Read(c *conf.Configuration, isAdmin func(string) bool, log *logrus.Entry) (*Policy, error) {
	p := &Policy{IsAdmin: isAdmin, Log: log}
	if p.Log == nil {
		p.Log = logrus.NewEntry(logrus.StandardLogger())
	}
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	var err error
	p.SecureRPC, err = kerberos.Enabled(c)
	add(err)
	p.StaticUser, err = c.Trimmed("hadoop.http.staticuser.user")
	add(err)
	if p.StaticUser == "" {
		p.StaticUser = "dr.who"
	}
	p.AnonymousAllowed, err = c.Bool("hadoop.http.authentication.simple.anonymous.allowed")
	add(err)
	p.Authorization, err = c.Bool("hadoop.security.authorization")
	add(err)
	p.InstrumentationAdmin, err = c.Bool("hadoop.security.instrumentation.requires.admin")
	add(err)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return p, nil
}

type callerKey struct{}
type provenKey struct{}

// Proven marks r as authenticated as user (by SPNEGO): the filter takes it as the caller.
func Proven(r *http.Request, user string) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), provenKey{}, user))
}

// From is the caller the filter decided. A request that did not pass it (a handler
// called in-process) is its user.name, else dr.who unauthenticated.
func From(r *http.Request) Caller {
	if c, ok := r.Context().Value(callerKey{}).(Caller); ok {
		return c
	}
	if u := r.URL.Query().Get("user.name"); u != "" {
		return Caller{Name: u, Authenticated: true}
	}
	return Caller{Name: "dr.who"}
}

// Wrap decides each request's caller before next sees it, and refuses REST writes by an
// unauthenticated caller of a kerberized cluster.
func (p *Policy) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := p.callerOf(r)
		if c.Name == "" {
			// Simple HTTP authentication with anonymous callers disallowed
			// (AuthenticationFilter answers 403 to PseudoAuthenticationHandler's refusal).
			http.Error(w, "Authentication required: Anonymous requests are disallowed", http.StatusForbidden)
			return
		}
		q := r.URL.Query()
		if q.Has("user.name") || c.Authenticated {
			r = r.Clone(r.Context())
			if c.Authenticated {
				q.Set("user.name", c.Name)
			} else {
				q.Del("user.name")
			}
			r.URL.RawQuery = q.Encode()
		}
		r = r.WithContext(context.WithValue(r.Context(), callerKey{}, c))
		if p.SecureRPC && !c.Authenticated && isWrite(r) {
			p.Log.WithFields(logrus.Fields{"method": r.Method, "path": r.URL.Path, "remote": r.RemoteAddr}).Warn("web write by the unauthenticated static user refused")
			http.Error(w, "The default static user cannot carry out this operation.", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (p *Policy) callerOf(r *http.Request) Caller {
	if u, ok := r.Context().Value(provenKey{}).(string); ok && u != "" {
		return Caller{Name: u, Authenticated: true}
	}
	if p.SecureRPC {
		return Caller{Name: p.StaticUser}
	}
	if u := r.URL.Query().Get("user.name"); u != "" {
		return Caller{Name: u, Authenticated: true}
	}
	if !p.AnonymousAllowed {
		return Caller{}
	}
	return Caller{Name: p.StaticUser}
}

// isWrite: a REST call that changes something (the REST APIs change only by POST, PUT
// and DELETE; /logLevel, a GET, is guarded as an administrator page).
func isWrite(r *http.Request) bool {
	if !strings.HasPrefix(r.URL.Path, "/ws/") {
		return false
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// AdminAccess is HttpServer2.hasAdministratorAccess: false (having answered 403) unless
// the caller may use administrator pages.
func (p *Policy) AdminAccess(w http.ResponseWriter, r *http.Request) bool {
	c := From(r)
	if p.SecureRPC && !c.Authenticated {
		p.refuse(w, r, c, "Unauthenticated users are not authorized to access this page.")
		return false
	}
	if !p.Authorization {
		return true
	}
	if p.IsAdmin != nil && !p.IsAdmin(c.Name) {
		p.refuse(w, r, c, "User "+c.Name+" is unauthorized to access this page.")
		return false
	}
	return true
}

// InstrumentationAccess is HttpServer2.isInstrumentationAccessAllowed: administrator
// access when hadoop.security.instrumentation.requires.admin, else everybody's.
func (p *Policy) InstrumentationAccess(w http.ResponseWriter, r *http.Request) bool {
	if !p.InstrumentationAdmin {
		return true
	}
	return p.AdminAccess(w, r)
}

func (p *Policy) refuse(w http.ResponseWriter, r *http.Request, c Caller, msg string) {
	p.Log.WithFields(logrus.Fields{"path": r.URL.Path, "user": c.Name, "remote": r.RemoteAddr}).Warn("administrator page refused")
	http.Error(w, msg, http.StatusForbidden)
}
