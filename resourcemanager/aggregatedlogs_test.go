package resourcemanager

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/client/amclient"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/tools/nmsim"
	"github.com/bobbin-yarn/bobbin/yarn/aggregatedlog"
)

// finishingAM registers and finishes at once.
func finishingAM(t *testing.T) amFunc {
	return func(ctx context.Context, _ *nmsim.Launch, am *amclient.Client) int32 {
		if _, err := am.Register(ctx, "am-host", 0, ""); err != nil {
			t.Errorf("register: %v", err)
			return 1
		}
		if err := am.Finish(ctx, yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED, "", ""); err != nil {
			t.Errorf("finish: %v", err)
			return 1
		}
		return 0
	}
}

// writeAggregatedLog writes what a NodeManager's upload of an application's AM container
// holds (AggregatedLogFormat): the owner, a VIEW_APP ACL and the AM's stdout. It returns
// the AM container's id.
func writeAggregatedLog(t *testing.T, remote, user, node, viewACL string, app records.ApplicationID, stdout []byte) string {
	t.Helper()
	am := records.ContainerID{Attempt: app.Attempt(1), ID: 1}.String()
	appDir := filepath.Join(remote, user, "logs", app.String())
	if err := os.MkdirAll(appDir, 0o755); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := aggregatedlog.NewWriter(&buf, user, []aggregatedlog.ACL{{Type: "VIEW_APP", ACL: viewACL}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(am, []aggregatedlog.LogFile{{Name: "stdout", Length: int64(len(stdout)), Open: func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(stdout)), nil
	}}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(appDir, aggregatedlog.NodeFileName(node)), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return am
}

// webGet fetches a page of the RM's web port: its status and body.
func webGet(t *testing.T, rm *ResourceManager, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + rm.WebAddr().String() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Once the NodeManager that ran an application's AM has left the cluster (decommissioned
// here), the RM's pages link the AM's logs to the RM itself, which reads them from the
// aggregated logs: the page lists the container's files and shows one; a file it lacks,
// a container without logs and a user who does not own the application get a page that
// says so.
func TestRMServesAggregatedLogsOnceTheNodeLeft(t *testing.T) {
	dir := t.TempDir()
	exclude := filepath.Join(dir, "exclude")
	if err := os.WriteFile(exclude, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	remote := filepath.Join(dir, "remote")
	c := testConf("yarn.log-aggregation-enable", "true", "yarn.nodemanager.remote-app-log-dir", "file://"+remote,
		"yarn.resourcemanager.nodes.exclude-path", exclude)
	sc := newSimCluster(t, c, 1, finishingAM(t))
	id := sc.submit(1, 0)
	rep := sc.waitFinal(id, 20*time.Second)
	app := records.AppIDFromProto(id)
	user := rep.GetUser()
	am := writeAggregatedLog(t, remote, user, sc.nms[0].Key(), " ", app, []byte(strings.Repeat("x", 5000)+"the AM's last words\n"))
	get := func(path string) (int, string) { t.Helper(); return webGet(t, sc.rm, path) }
	// While the NodeManager is in the cluster, its page is where the logs are.
	if _, page := get("/cluster/app/" + app.String()); !strings.Contains(page, "/node/containerlogs/"+am+"/"+user) {
		t.Fatalf("the app page does not link the AM's logs to its NodeManager:\n%s", page)
	}
	if err := os.WriteFile(exclude, []byte(sc.nms[0].NodeID().GetHost()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := sc.rm.Core().RefreshNodes(false, 0); err != nil {
		t.Fatal(err)
	}
	link := "/cluster/logs/" + am + "/" + user
	testutil.Eventually(t, 5*time.Second, "the app page never linked the AM's logs to the RM once the node left", func() bool {
		_, page := get("/cluster/app/" + app.String())
		return strings.Contains(page, `href="`+link+`"`)
	})
	if _, page := get("/cluster/appattempt/" + app.Attempt(1).String()); !strings.Contains(page, `href="`+link+`"`) {
		t.Errorf("the attempt page does not link the AM's logs to the RM:\n%s", page)
	}
	if status, page := get(link); status != http.StatusOK || !strings.Contains(page, link+"/stdout") || !strings.Contains(page, "Served by the ResourceManager") {
		t.Errorf("%s: %d\n%s", link, status, page)
	}
	// The last 4 KiB by default, the whole file with start=0.
	if status, page := get(link + "/stdout"); status != http.StatusOK || !strings.Contains(page, "the AM&#39;s last words") || !strings.Contains(page, "last 4096 of 5020 bytes") {
		t.Errorf("%s/stdout: %d\n%s", link, status, page)
	}
	if _, page := get(link + "/stdout?start=0"); strings.Count(page, "x") < 5000 {
		t.Errorf("start=0 does not show the whole file")
	}
	for path, want := range map[string]struct {
		status int
		text   string
	}{
		link + "/syslog": {http.StatusNotFound, "No log file syslog of " + am},
		"/cluster/logs/" + records.ContainerID{Attempt: app.Attempt(1), ID: 2}.String() + "/" + user: {http.StatusNotFound, "No aggregated logs of"},
		"/cluster/logs/" + am + "/mallory": {http.StatusNotFound, "belongs to " + user + "&#39;s application, not mallory&#39;s"},
		"/cluster/logs/" + am + "/-bad":    {http.StatusBadRequest, "Invalid user name"},
	} {
		if status, page := get(path); status != want.status || !strings.Contains(page, want.text) {
			t.Errorf("%s: %d, want %d with %q\n%s", path, status, want.status, want.text, page)
		}
	}
}

// With yarn.acl.enable, the logs of an application the RM has forgotten (beyond
// max-completed-applications) are read for its owner, an administrator and the users its
// aggregated file's VIEW_APP ACL names; anyone else is refused, and learns neither where
// the logs are nor whether there are any.
func TestRMAggregatedLogsOfAForgottenApplicationFollowTheFileACLs(t *testing.T) {
	remote := filepath.Join(t.TempDir(), "remote")
	c := testConf("yarn.log-aggregation-enable", "true", "yarn.nodemanager.remote-app-log-dir", "file://"+remote,
		"yarn.acl.enable", "true", "yarn.admin.acl", "admin", "yarn.resourcemanager.max-completed-applications", "1")
	sc := newSimCluster(t, c, 1, finishingAM(t))
	first := sc.submit(1, 0)
	user := sc.waitFinal(first, 20*time.Second).GetUser()
	sc.waitFinal(sc.submit(1, 0), 20*time.Second)
	app := records.AppIDFromProto(first)
	testutil.Eventually(t, 10*time.Second, app.String()+" is still known with max-completed-applications 1", func() bool {
		_, known := sc.rm.Core().AppReport(app)
		return !known
	})
	am := writeAggregatedLog(t, remote, user, sc.nms[0].Key(), "carol", app, []byte("forgotten but kept\n"))
	link := "/cluster/logs/" + am + "/" + user + "/stdout"
	for who, want := range map[string]int{user: http.StatusOK, "admin": http.StatusOK, "carol": http.StatusOK, "mallory": http.StatusForbidden} {
		status, page := webGet(t, sc.rm, link+"?user.name="+who)
		if status != want || (want == http.StatusOK) != strings.Contains(page, "forgotten but kept") {
			t.Errorf("%s: %d, want %d\n%s", who, status, want, page)
		}
	}
	// Another container of it, which has no logs: mallory learns nothing of where.
	other := "/cluster/logs/" + records.ContainerID{Attempt: app.Attempt(1), ID: 2}.String() + "/" + user
	if status, page := webGet(t, sc.rm, other+"?user.name=mallory"); status != http.StatusNotFound || !strings.Contains(page, "that you may read") || strings.Contains(page, remote) {
		t.Errorf("mallory, a container without logs: %d\n%s", status, page)
	}
	if status, page := webGet(t, sc.rm, other+"?user.name="+user); status != http.StatusNotFound || !strings.Contains(page, "No aggregated logs of") {
		t.Errorf("the owner, a container without logs: %d\n%s", status, page)
	}
}
