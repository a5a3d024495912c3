// Package webproxy is YARN's web application proxy: /proxy/<application id>/<path>
// forwards to the web UI an application's AM registered, so users and scripts reach every
// AM through the RM's one address (the tracking URL MapReduce and Spark print), and AMs'
// pages are never opened directly from a browser.
//
// It does what the Java WebAppProxyServlet does:
//   - an unknown application: 404, "Application <id> could not be found in RM or history
//     server";
//   - no tracking URL yet (the AM has not registered, or registered none): a redirect to
//     the RM's page of the application;
//   - a finished application: a redirect to the final tracking URL the AM left (MapReduce:
//     its job history page);
//   - a running one: the request (GET, HEAD or PUT) is made to the AM from the proxy's
//     own address, which the AM's AmIpFilter checks, with the pass-through headers and a
//     proxy-user cookie naming the caller; the AM's answer (status, headers, body) is
//     returned as it is, except that the AM's redirect of a GET or HEAD to its own
//     address is followed (followAMRedirect).
//
// The proxy runs inside the RM when yarn.web-proxy.address is unset, and as `bobbin
// webproxy` on that address otherwise; Reports is where it learns of applications.
package webproxy

import (
	"context"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/yarn/webuser"
)

// Reports looks applications up.
type Reports interface {
	// ApplicationReport returns an application's report, or nil (and no error) when the
	// RM does not know it.
	ApplicationReport(ctx context.Context, id records.ApplicationID) (*yarnpb.ApplicationReportProto, error)
}

// ReportsFunc adapts a function to Reports.
type ReportsFunc func(ctx context.Context, id records.ApplicationID) (*yarnpb.ApplicationReportProto, error)

// ApplicationReport calls f.
func (f ReportsFunc) ApplicationReport(ctx context.Context, id records.ApplicationID) (*yarnpb.ApplicationReportProto, error) {
	return f(ctx, id)
}

// Options configure a Proxy.
type Options struct {
	Reports Reports
	// RMWeb returns the RM's web base, "http://host:port": applications without a
	// tracking URL are sent to its /cluster/app/<id> page, and redirect loops to its
	// /cluster/failure/<id> page.
	RMWeb func() string
	// Host is the proxy's host as AMs know it (the host of the tracking URLs, which the
	// AMs' filters resolve): requests to AMs are made from that host's local address.
	// Empty or a wildcard: this machine's host name.
	Host string
	// Timeout bounds connecting to an AM and each read from it; 0: none.
	Timeout time.Duration
	Log     *logrus.Entry
}

// Proxy serves /proxy/.
type Proxy struct {
	o      Options
	local  net.IP // the address requests to AMs are made from; nil: the kernel's choice
	client *http.Client
	log    *logrus.Entry
}

// passThrough are the request headers given to the AM (the Java proxy's list).
var passThrough = []string{"User-Agent", "Accept", "Accept-Encoding", "Accept-Language", "Accept-Charset", "Content-Type",
	"Origin", "Access-Control-Request-Method", "Access-Control-Request-Headers"}

// hopByHop are response headers that describe the proxy's connection to the AM, not the
// answer (RFC 9110 §7.6.1).
var hopByHop = map[string]bool{"Connection": true, "Keep-Alive": true, "Proxy-Connection": true, "Te": true, "Trailer": true,
	"Transfer-Encoding": true, "Upgrade": true, "Proxy-Authenticate": true, "Content-Length": true}

// New builds a proxy.
func New(o Options) *Proxy {
	if o.Log == nil {
		o.Log = logrus.NewEntry(logrus.StandardLogger())
	}
	p := &Proxy{o: o, log: o.Log.WithField("component", "webproxy")}
	p.local = localAddress(o.Host)
	if p.local == nil {
		p.log.WithField("host", o.Host).Warn("the web proxy's host has no address on this machine: requests to AMs leave from " +
			"the kernel's choice of address, which an AM's filter may not accept as the proxy")
	}
	t := &http.Transport{
		DialContext:           p.dial,
		ResponseHeaderTimeout: o.Timeout,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		// The caller's Accept-Encoding goes to the AM and its encoded body comes back
		// as it is.
		DisableCompression: true,
	}
	p.client = &http.Client{Transport: t, CheckRedirect: followAMRedirect}
	return p
}

// followAMRedirect says which of an AM's redirects the proxy follows itself: those of a
// GET or HEAD to the AM's own scheme and address, as the Java proxy's HTTP client follows
// them (a Spark UI sends "/" to its jobs page at the AM's own address, which the caller
// may not reach), up to ten. The Java client follows any; one to elsewhere goes back to
// the caller here, so that an AM cannot have the RM's proxy fetch another server's pages
// for it. A redirect into a proxy (the AM's filter sending the caller to
// /proxy/redirect/) goes back too, where the loop check in forward sees it.
func followAMRedirect(req *http.Request, via []*http.Request) error {
	first := via[0]
	switch {
	case len(via) >= 10, first.Method != http.MethodGet && first.Method != http.MethodHead,
		req.URL.Scheme != first.URL.Scheme, req.URL.Host != first.URL.Host, strings.Contains(req.URL.Path, "/proxy/"):
		return http.ErrUseLastResponse
	}
	return nil
}

// Close releases idle connections to AMs.
func (p *Proxy) Close() { p.client.CloseIdleConnections() }

// localAddress is host's address on this machine, if it has one.
func localAddress(host string) net.IP {
	if host == "" || host == "0.0.0.0" || host == "::" {
		host, _ = os.Hostname()
	}
	ips, err := net.LookupIP(host)
	if err != nil {
		return nil
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	for _, ip := range ips {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
				return ip
			}
		}
	}
	return nil
}

// dial connects to an AM from the proxy's address (when the families agree), with the
// timeout on connecting and on every read and write.
func (p *Proxy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: p.o.Timeout}
	if p.local != nil {
		v4 := p.local.To4() != nil
		host, _, _ := net.SplitHostPort(addr)
		if ip := net.ParseIP(host); ip == nil || (ip.To4() != nil) == v4 {
			d.LocalAddr = &net.TCPAddr{IP: p.local}
			if ip == nil && v4 {
				network = "tcp4"
			} else if ip == nil {
				network = "tcp6"
			}
		}
	}
	c, err := d.DialContext(ctx, network, addr)
	if err != nil || p.o.Timeout <= 0 {
		return c, err
	}
	return &deadlineConn{Conn: c, timeout: p.o.Timeout}, nil
}

// deadlineConn gives every read and write its own deadline: a stalled AM costs the proxy
// one timeout, however long a body it is sending.
type deadlineConn struct {
	net.Conn
	timeout time.Duration
}

func (c *deadlineConn) Read(b []byte) (int, error) {
	c.Conn.SetReadDeadline(time.Now().Add(c.timeout))
	return c.Conn.Read(b)
}

func (c *deadlineConn) Write(b []byte) (int, error) {
	c.Conn.SetWriteDeadline(time.Now().Add(c.timeout))
	return c.Conn.Write(b)
}

// ServeHTTP serves /proxy/<application id>/<path> and /proxy/redirect/<application
// id>/<path> (where an AM's filter sends a caller that did not come through the proxy).
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.EscapedPath(), "/proxy")
	redirected := strings.HasPrefix(path, "/redirect/")
	if redirected {
		path = strings.TrimPrefix(path, "/redirect")
	}
	parts := strings.SplitN(path, "/", 3) // "", id, rest
	if len(parts) < 2 || parts[1] == "" {
		notFound(w, "Your path appears to be formatted incorrectly.")
		return
	}
	raw, rest := parts[1], ""
	if len(parts) == 3 {
		rest = parts[2]
	}
	user := caller(r)
	log := p.log.WithFields(logrus.Fields{"application": raw, "user": user})
	id, err := records.ParseApplicationID(raw)
	if err != nil {
		notFound(w, raw+" appears to be formatted incorrectly.")
		return
	}
	rep, err := p.o.Reports.ApplicationReport(r.Context(), id)
	if err != nil {
		log.WithError(err).Warn("web proxy cannot get the application's report")
		page(w, http.StatusBadGateway, "Cannot reach the ResourceManager", "The report of "+id.String()+" could not be fetched: "+err.Error())
		return
	}
	if rep == nil {
		notFound(w, "Application "+id.String()+" could not be found in RM or history server")
		return
	}
	orig := rep.GetOriginalTrackingUrl()
	if orig == "" || strings.EqualFold(orig, "N/A") {
		// No AM page (yet): the RM's page of the application.
		sendRedirect(w, strings.TrimSuffix(p.o.RMWeb(), "/")+"/cluster/app/"+id.String())
		return
	}
	target, err := trackingTarget(orig, rest, r.URL.RawQuery)
	if err != nil {
		log.WithError(err).Warn("web proxy: the application's tracking URL is not a URL")
		notFound(w, fmt.Sprintf("The tracking URL %q of %s is not a URL: %v", orig, id, err))
		return
	}
	switch rep.GetYarnApplicationState() {
	case yarnpb.YarnApplicationStateProto_FINISHED, yarnpb.YarnApplicationStateProto_FAILED, yarnpb.YarnApplicationStateProto_KILLED:
		// The AM is gone: its final tracking URL (a history server) takes the caller, as
		// from the Java proxy; who does not follow redirects reads the final state.
		redirectPage(w, target, fmt.Sprintf("Application %s has ended: %s, final status %s", id, rep.GetYarnApplicationState(),
			strings.TrimPrefix(rep.GetFinalApplicationStatus().String(), "APP_")), "Its history is")
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPut:
	default:
		w.Header().Set("Allow", "GET, HEAD, PUT")
		page(w, http.StatusMethodNotAllowed, "Method not allowed", r.Method+" is not proxied to application masters")
		return
	}
	p.forward(w, r, log, id, target, user, redirected)
}

// forward makes the request to the AM and copies its answer back.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, log *logrus.Entry, id records.ApplicationID, target, user string, redirected bool) {
	var body io.Reader
	if r.Method == http.MethodPut {
		body = r.Body
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, target, body)
	if err != nil {
		notFound(w, fmt.Sprintf("The tracking URL of %s cannot be requested: %v", id, err))
		return
	}
	for _, h := range passThrough {
		if v := r.Header.Values(h); len(v) > 0 {
			req.Header[h] = v
		}
	}
	if r.Method == http.MethodPut {
		req.ContentLength = r.ContentLength
	}
	req.Header.Set("Cookie", "proxy-user="+url.QueryEscape(user))
	resp, err := p.client.Do(req)
	if err != nil {
		log.WithError(err).WithField("url", target).Warn("web proxy cannot reach the application master")
		page(w, http.StatusBadGateway, "Cannot reach the application master",
			fmt.Sprintf("The web UI of %s at %s did not answer: %v", id, target, err))
		return
	}
	defer resp.Body.Close()
	if redirected && resp.StatusCode >= 300 && resp.StatusCode < 400 && strings.Contains(resp.Header.Get("Location"), "/proxy/redirect/") {
		// The AM sent the caller back to the proxy, which brought it back to the AM: the
		// AM does not take the proxy's address for the proxy's, and the caller would go
		// round for ever.
		log.WithField("url", target).Error("The AM's web app redirected the web proxy's request back to the web proxy: the AM resolves " +
			"the proxy's host (yarn.web-proxy.address, or the RM's web address) to an address the proxy does not send from")
		sendRedirect(w, strings.TrimSuffix(p.o.RMWeb(), "/")+"/cluster/failure/"+id.String())
		return
	}
	for k, v := range resp.Header {
		if !hopByHop[k] {
			w.Header()[k] = v
		}
	}
	if resp.ContentLength >= 0 {
		w.Header().Set("Content-Length", fmt.Sprint(resp.ContentLength))
	}
	w.WriteHeader(resp.StatusCode)
	if r.Method != http.MethodHead {
		if _, err := io.Copy(w, resp.Body); err != nil {
			log.WithError(err).WithField("url", target).Debug("web proxy: the answer was cut short")
		}
	}
}

// trackingTarget is the URL to fetch: the tracking URL (http:// when it has no scheme, as
// MapReduce registers host:port in some versions), the caller's path under it, and the
// caller's query after the tracking URL's own.
func trackingTarget(orig, rest, query string) (string, error) {
	if !strings.Contains(orig, "://") {
		orig = "http://" + orig
	}
	u, err := url.Parse(orig)
	if err != nil {
		return "", err
	}
	if u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("want an http URL with a host")
	}
	p := u.EscapedPath()
	if rest != "" {
		p = strings.TrimSuffix(p, "/") + "/" + rest
	}
	if p == "" {
		p = "/"
	}
	s := u.Scheme + "://" + u.Host + p
	q := u.RawQuery
	if query != "" {
		if q != "" {
			q += "&"
		}
		q += query
	}
	if q != "" {
		s += "?" + q
	}
	if _, err := url.Parse(s); err != nil {
		return "", err
	}
	return s, nil
}

// caller is the web user as yarn/webuser decided it (the RM's web port and the proxy's
// own both pass its filter): an authenticated name, else the static user.
func caller(r *http.Request) string { return webuser.From(r).Name }

// notFound is the Java proxy's 404: a page with the message as its heading.
func notFound(w http.ResponseWriter, msg string) {
	page(w, http.StatusNotFound, msg, "")
}

func page(w http.ResponseWriter, status int, title, text string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!DOCTYPE html>\n<html><head><title>%s</title></head><body><h1>%s</h1>", html.EscapeString(title), html.EscapeString(title))
	if text != "" {
		fmt.Fprintf(w, "<p>%s</p>", html.EscapeString(text))
	}
	fmt.Fprint(w, "</body></html>\n")
}

// sendRedirect is the Java proxy's redirect: 302 with a small "Moved" page.
func sendRedirect(w http.ResponseWriter, target string) {
	redirectPage(w, target, "Moved", "Content has moved")
}

// redirectPage is a 302 to target whose page says title and links target.
func redirectPage(w http.ResponseWriter, target, title, link string) {
	w.Header().Set("Location", target)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusFound)
	fmt.Fprintf(w, "<!DOCTYPE html>\n<html><head><title>%[1]s</title></head><body><h1>%[1]s</h1><div>%[2]s <a href=\"%[3]s\">here</a></div></body></html>\n",
		html.EscapeString(title), html.EscapeString(link), html.EscapeString(target))
}
