package resourcemanager

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/client/amclient"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/tools/nmsim"
)

// The RM's web proxy over an application's life, as the Java RM runs it: the report's
// tracking URL is the proxy's page of the application from submission on; before the AM
// registers, the proxy sends the caller to the RM's application page; while the AM runs,
// its web UI (a real HTTP server here) is served through the proxy with the caller named in
// the proxy-user cookie; after the AM unregisters, the proxy sends the caller to the final
// tracking URL it left.
func TestWebProxyFollowsTheApplication(t *testing.T) {
	var mu sync.Mutex
	var amAsked []string
	ui := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Cookie("proxy-user")
		mu.Lock()
		amAsked = append(amAsked, r.URL.RequestURI()+" "+fmt.Sprint(c))
		mu.Unlock()
		fmt.Fprintf(w, "<html>job page %s</html>", r.URL.Path)
	}))
	defer ui.Close()

	sc := newSimCluster(t, testConf(), 1, nil)
	registered, release := make(chan struct{}), make(chan struct{})
	sc.am = func(ctx context.Context, _ *nmsim.Launch, am *amclient.Client) int32 {
		wait := func() bool {
			select {
			case <-release:
				return true
			case <-ctx.Done():
				return false
			}
		}
		if !wait() { // the test looks at the accepted application first
			return 1
		}
		if _, err := am.Register(ctx, "am-host", 4242, strings.TrimPrefix(ui.URL, "http://")); err != nil {
			t.Errorf("register: %v", err)
			return 1
		}
		registered <- struct{}{}
		if !wait() {
			return 1
		}
		// Once unregistered the RM ends the application and its container may be stopped
		// (ctx ends) before Finish hears the answer.
		if err := am.Finish(ctx, yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED, "", "http://history.example:19888/jobhistory/job/job_1"); err != nil && ctx.Err() == nil {
			t.Errorf("unregister: %v", err)
			return 1
		}
		return 0
	}
	id := sc.submit(1, 0)
	app := records.AppIDFromProto(id).String()
	web := "http://" + sc.rm.WebAddr().String()
	proxyURL := web + "/proxy/" + app + "/"
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) (int, string, string) {
		t.Helper()
		resp, err := noFollow.Get(web + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Location"), string(b)
	}
	report := func() *yarnpb.ApplicationReportProto {
		rep, err := sc.cl.GetApplicationReport(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}

	// Accepted, no AM page yet.
	testutil.Eventually(t, 20*time.Second, "no attempt", func() bool { return report().GetCurrentApplicationAttemptId() != nil })
	if rep := report(); rep.GetTrackingUrl() != proxyURL || rep.GetOriginalTrackingUrl() != "N/A" {
		t.Fatalf("before registration: tracking %q original %q, want %q and N/A", rep.GetTrackingUrl(), rep.GetOriginalTrackingUrl(), proxyURL)
	}
	if code, loc, _ := get("/proxy/" + app + "/"); code != http.StatusFound || loc != web+"/cluster/app/"+app {
		t.Fatalf("before registration the proxy answers %d %q", code, loc)
	}

	// Running: the AM's page through the proxy.
	release <- struct{}{}
	<-registered
	if rep := report(); rep.GetTrackingUrl() != proxyURL || rep.GetOriginalTrackingUrl() != strings.TrimPrefix(ui.URL, "http://") {
		t.Fatalf("running: tracking %q original %q", rep.GetTrackingUrl(), rep.GetOriginalTrackingUrl())
	}
	_, v, raw := restCall(t, sc.rm, "GET", "/ws/v1/cluster/apps/"+app, "", "")
	if a := v["app"].(map[string]any); a["trackingUrl"] != proxyURL || a["trackingUI"] != "ApplicationMaster" {
		t.Fatalf("REST app while running: %s", raw)
	}
	if code, _, body := get("/proxy/" + app + "/mapreduce/job/job_1?user.name=alice"); code != http.StatusOK || body != "<html>job page /mapreduce/job/job_1</html>" {
		t.Fatalf("the AM's page through the proxy: %d %q", code, body)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(amAsked) != 1 || amAsked[0] != "/mapreduce/job/job_1?user.name=alice proxy-user=alice" {
		t.Fatalf("the AM was asked %q", amAsked)
	}
	attempts := sc.attempts(id)
	if len(attempts) != 1 || attempts[0].GetTrackingUrl() != proxyURL {
		t.Fatalf("attempt report tracking URL: %v", attempts)
	}

	// Finished: to the history page.
	release <- struct{}{}
	if rep := sc.waitFinal(id, 20*time.Second); rep.GetTrackingUrl() != proxyURL ||
		rep.GetOriginalTrackingUrl() != "http://history.example:19888/jobhistory/job/job_1" {
		t.Fatalf("finished: tracking %q original %q", rep.GetTrackingUrl(), rep.GetOriginalTrackingUrl())
	}
	if code, loc, _ := get("/proxy/" + app + "/"); code != http.StatusFound || loc != "http://history.example:19888/jobhistory/job/job_1" {
		t.Fatalf("after the AM finished the proxy answers %d %q", code, loc)
	}
	_, v, raw = restCall(t, sc.rm, "GET", "/ws/v1/cluster/apps/"+app, "", "")
	if a := v["app"].(map[string]any); a["trackingUrl"] != proxyURL || a["trackingUI"] != "History" {
		t.Fatalf("REST app after the finish: %s", raw)
	}
	if code, _, body := get("/proxy/application_1_0042/"); code != http.StatusNotFound || !strings.Contains(body, "could not be found in RM or history server") {
		t.Fatalf("unknown application: %d %q", code, body)
	}
}
