package webproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/conf"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
)

// seen is what the AM's web server was asked last.
type seen struct {
	mu     sync.Mutex
	method string
	uri    string
	header http.Header
	body   string
	remote string
}

// amServer is an AM web UI on loopback: /page answers with what it got, /moved
// redirects, /back redirects to the proxy's redirect path, /slow stalls.
func amServer(t *testing.T, s *seen, stop chan struct{}) *httptest.Server {
	am := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.method, s.uri, s.header, s.body, s.remote = r.Method, r.RequestURI, r.Header.Clone(), string(b), r.RemoteAddr
		s.mu.Unlock()
		switch {
		case strings.HasPrefix(r.URL.Path, "/ui/moved"):
			http.Redirect(w, r, "/ui/elsewhere", http.StatusFound)
		case strings.HasPrefix(r.URL.Path, "/ui/away"):
			http.Redirect(w, r, "http://127.0.0.2:1/private", http.StatusFound)
		case strings.HasPrefix(r.URL.Path, "/ui/back"):
			http.Redirect(w, r, "http://127.0.0.1:1/proxy/redirect/application_1_0001/ui/back", http.StatusFound)
		case strings.HasPrefix(r.URL.Path, "/ui/slow"):
			select {
			case <-stop:
			case <-r.Context().Done():
			}
		default:
			w.Header().Set("X-Am", "yes")
			w.Header().Set("Set-Cookie", "am=1")
			w.WriteHeader(http.StatusAccepted)
			fmt.Fprintf(w, "am page %s", r.URL.Path)
		}
	}))
	t.Cleanup(am.Close)
	return am
}

type fixture struct {
	proxy *httptest.Server
	am    *httptest.Server
	seen  *seen
	apps  map[string]*yarnpb.ApplicationReportProto
}

func newFixture(t *testing.T, timeout time.Duration) *fixture {
	f := &fixture{seen: &seen{}, apps: map[string]*yarnpb.ApplicationReportProto{}}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	f.am = amServer(t, f.seen, stop)
	var mu sync.Mutex
	p := New(Options{
		Reports: ReportsFunc(func(_ context.Context, id records.ApplicationID) (*yarnpb.ApplicationReportProto, error) {
			mu.Lock()
			defer mu.Unlock()
			if id.ID == 66 {
				return nil, errors.New("connection refused")
			}
			return f.apps[id.String()], nil
		}),
		RMWeb:   func() string { return "http://rm.example:8088" },
		Host:    "127.0.0.1",
		Timeout: timeout,
	})
	t.Cleanup(p.Close)
	mux := http.NewServeMux()
	mux.Handle("/proxy/", p)
	f.proxy = httptest.NewServer(mux)
	t.Cleanup(f.proxy.Close)
	return f
}

func (f *fixture) app(id string, state yarnpb.YarnApplicationStateProto, orig string) {
	f.apps[id] = &yarnpb.ApplicationReportProto{YarnApplicationState: state.Enum(), OriginalTrackingUrl: proto.String(orig), User: proto.String("alice")}
}

// do makes a request to the proxy without following redirects.
func (f *fixture) do(t *testing.T, method, path, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, f.proxy.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestProxyForwardsToTheRunningAM(t *testing.T) {
	f := newFixture(t, 5*time.Second)
	amHostPort := strings.TrimPrefix(f.am.URL, "http://")
	// MapReduce registers host:port without a scheme in some versions; the path under it counts.
	f.app("application_1_0001", yarnpb.YarnApplicationStateProto_RUNNING, amHostPort+"/ui?from=am")

	resp, body := f.do(t, "GET", "/proxy/application_1_0001/jobs/j1?user.name=bob&x=a%20b", "",
		map[string]string{"User-Agent": "tester", "Accept": "text/html", "X-Secret": "no", "Cookie": "session=browser"})
	if resp.StatusCode != http.StatusAccepted || body != "am page /ui/jobs/j1" || resp.Header.Get("X-Am") != "yes" || resp.Header.Get("Set-Cookie") != "am=1" {
		t.Fatalf("proxied GET: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	f.seen.mu.Lock()
	defer f.seen.mu.Unlock()
	if f.seen.uri != "/ui/jobs/j1?from=am&user.name=bob&x=a%20b" {
		t.Errorf("the AM was asked for %q", f.seen.uri)
	}
	if f.seen.header.Get("User-Agent") != "tester" || f.seen.header.Get("Accept") != "text/html" || f.seen.header.Get("X-Secret") != "" {
		t.Errorf("pass-through headers: %v", f.seen.header)
	}
	// The caller's own cookies stay with the proxy; the AM learns the user from proxy-user.
	if f.seen.header.Get("Cookie") != "proxy-user=bob" {
		t.Errorf("Cookie to the AM: %q", f.seen.header.Get("Cookie"))
	}
	if host, _, _ := net.SplitHostPort(f.seen.remote); host != "127.0.0.1" {
		t.Errorf("the request came from %s, not the proxy host's address", f.seen.remote)
	}
}

func TestProxyMethodsAndRedirects(t *testing.T) {
	f := newFixture(t, 5*time.Second)
	f.app("application_1_0001", yarnpb.YarnApplicationStateProto_RUNNING, f.am.URL+"/ui/")

	resp, _ := f.do(t, "PUT", "/proxy/application_1_0001/state", `{"state":"KILLED"}`, map[string]string{"Content-Type": "application/json"})
	f.seen.mu.Lock()
	if resp.StatusCode != http.StatusAccepted || f.seen.method != "PUT" || f.seen.body != `{"state":"KILLED"}` || f.seen.header.Get("Content-Type") != "application/json" {
		t.Errorf("PUT: %d, AM got %s %q %v", resp.StatusCode, f.seen.method, f.seen.body, f.seen.header)
	}
	f.seen.mu.Unlock()
	if resp, _ := f.do(t, "POST", "/proxy/application_1_0001/x", "", nil); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405", resp.StatusCode)
	}
	if resp, body := f.do(t, "HEAD", "/proxy/application_1_0001/x", "", nil); resp.StatusCode != http.StatusAccepted || body != "" {
		t.Errorf("HEAD: %d %q", resp.StatusCode, body)
	}
	// The AM's redirect of a GET is followed by the proxy, as by the Java proxy's HTTP
	// client: the caller gets the page it leads to, without leaving the proxy (a Spark
	// UI's "/" redirects to its jobs page at the AM's own address). A PUT's comes back.
	if resp, body := f.do(t, "GET", "/proxy/application_1_0001/moved", "", nil); resp.StatusCode != http.StatusAccepted || body != "am page /ui/elsewhere" {
		t.Errorf("AM redirect: %d %q %q", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	if resp, _ := f.do(t, "PUT", "/proxy/application_1_0001/moved", "x", nil); resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/ui/elsewhere" {
		t.Errorf("AM redirect of a PUT: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	// One to another server is the caller's: the proxy fetches only the AM's address.
	if resp, _ := f.do(t, "GET", "/proxy/application_1_0001/away", "", nil); resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "http://127.0.0.2:1/private" {
		t.Errorf("AM redirect elsewhere: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	// Sent back to the proxy by the AM a second time: the loop ends on the RM's failure page.
	if resp, _ := f.do(t, "GET", "/proxy/redirect/application_1_0001/back", "", nil); resp.StatusCode != http.StatusFound ||
		resp.Header.Get("Location") != "http://rm.example:8088/cluster/failure/application_1_0001" {
		t.Errorf("redirect loop: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	// Through /proxy/redirect/ once (the AM's filter sent a browser here) the page is served.
	if resp, body := f.do(t, "GET", "/proxy/redirect/application_1_0001/page", "", nil); resp.StatusCode != http.StatusAccepted || body != "am page /ui/page" {
		t.Errorf("via /proxy/redirect/: %d %q", resp.StatusCode, body)
	}
}

func TestProxyApplicationStates(t *testing.T) {
	f := newFixture(t, 5*time.Second)
	f.app("application_1_0002", yarnpb.YarnApplicationStateProto_ACCEPTED, "N/A")
	f.app("application_1_0003", yarnpb.YarnApplicationStateProto_FINISHED, "http://history:19888/jobhistory/job/job_1_0003")
	f.app("application_1_0004", yarnpb.YarnApplicationStateProto_RUNNING, "")
	f.app("application_1_0005", yarnpb.YarnApplicationStateProto_RUNNING, "ftp://x/")
	f.app("application_1_0007", yarnpb.YarnApplicationStateProto_RUNNING, "127.0.0.1:1")
	for _, c := range []struct {
		path     string
		status   int
		location string
		body     string
	}{
		{"/proxy/application_1_0002/", http.StatusFound, "http://rm.example:8088/cluster/app/application_1_0002", "Moved"},
		{"/proxy/application_1_0004/jobs", http.StatusFound, "http://rm.example:8088/cluster/app/application_1_0004", "Moved"},
		{"/proxy/application_1_0003/conf?x=1", http.StatusFound, "http://history:19888/jobhistory/job/job_1_0003/conf?x=1", "Application application_1_0003 has ended: FINISHED, final status UNDEFINED"},
		{"/proxy/application_1_0009/", http.StatusNotFound, "", "Application application_1_0009 could not be found in RM or history server"},
		{"/proxy/application_x/", http.StatusNotFound, "", "application_x appears to be formatted incorrectly."},
		{"/proxy/", http.StatusNotFound, "", "Your path appears to be formatted incorrectly."},
		{"/proxy/application_1_0005/", http.StatusNotFound, "", "is not a URL"},
		{"/proxy/application_1_0066/", http.StatusBadGateway, "", "connection refused"},
		{"/proxy/application_1_0007/", http.StatusBadGateway, "", "did not answer"},
	} {
		resp, body := f.do(t, "GET", c.path, "", nil)
		if resp.StatusCode != c.status || resp.Header.Get("Location") != c.location || !strings.Contains(body, c.body) {
			t.Errorf("GET %s: %d %q %q, want %d %q %q", c.path, resp.StatusCode, resp.Header.Get("Location"), body, c.status, c.location, c.body)
		}
	}
}

func TestProxyTimesOutAStalledAM(t *testing.T) {
	f := newFixture(t, 300*time.Millisecond)
	f.app("application_1_0001", yarnpb.YarnApplicationStateProto_RUNNING, f.am.URL+"/ui")
	start := time.Now()
	resp, body := f.do(t, "GET", "/proxy/application_1_0001/slow", "", nil)
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "did not answer") {
		t.Fatalf("stalled AM: %d %q", resp.StatusCode, body)
	}
	t.Logf("a stalled AM answered 502 after %v", time.Since(start).Round(time.Millisecond))
}

func TestReadSettings(t *testing.T) {
	c := conf.New()
	s, err := ReadSettings(c)
	if err != nil || s.Addr != "" || s.Timeout != time.Minute {
		t.Fatalf("defaults: %+v %v", s, err)
	}
	c.Set("yarn.web-proxy.address", "proxy.example:9046")
	c.Set("yarn.resourcemanager.proxy.timeout.enabled", "false")
	if s, err := ReadSettings(c); err != nil || s.Addr != "proxy.example:9046" || s.Timeout != 0 {
		t.Fatalf("set: %+v %v", s, err)
	}
	c.Set("yarn.web-proxy.address", "proxy.example")
	c.Set("yarn.resourcemanager.proxy.timeout.enabled", "true")
	c.Set("yarn.resourcemanager.proxy.connection.timeout", "0")
	_, err = ReadSettings(c)
	if err == nil || !strings.Contains(err.Error(), "yarn.web-proxy.address") || !strings.Contains(err.Error(), "yarn.resourcemanager.proxy.connection.timeout") {
		t.Fatalf("bad values: %v", err)
	}
	c = conf.New()
	if _, err := NewServer(c, "u", nil); err == nil || !strings.Contains(err.Error(), "yarn.web-proxy.address") {
		t.Fatalf("standalone proxy without an address: %v", err)
	}
	c.Set("yarn.web-proxy.address", "127.0.0.1:0")
	c.Set("yarn.http.policy", "HTTPS_ONLY")
	if _, err := NewServer(c, "u", nil); err == nil || !strings.Contains(err.Error(), "yarn.http.policy") {
		t.Fatalf("HTTPS asked for: %v", err)
	}
}
