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
	sc := newSimCluster(t, c, 1, func(ctx context.Context, _ *nmsim.Launch, am *amclient.Client) int32 {
		if _, err := am.Register(ctx, "am-host", 0, ""); err != nil {
			t.Errorf("register: %v", err)
			return 1
		}
		if err := am.Finish(ctx, yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED, "", ""); err != nil {
			t.Errorf("finish: %v", err)
			return 1
		}
		return 0
	})
	id := sc.submit(1, 0)
	rep := sc.waitFinal(id, 20*time.Second)
	app := records.AppIDFromProto(id)
	user := rep.GetUser()
	am := records.ContainerID{Attempt: app.Attempt(1), ID: 1}.String()
	node := sc.nms[0].Key()

	// The NodeManager's upload, as AggregatedLogFormat writes it.
	appDir := filepath.Join(remote, user, "logs", app.String())
	if err := os.MkdirAll(appDir, 0o755); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := aggregatedlog.NewWriter(&buf, user, []aggregatedlog.ACL{{Type: "VIEW_APP", ACL: " "}})
	if err != nil {
		t.Fatal(err)
	}
	stdout := []byte(strings.Repeat("x", 5000) + "the AM's last words\n")
	if err := w.Append(am, []aggregatedlog.LogFile{{Name: "stdout", Length: int64(len(stdout)), Open: func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(stdout)), nil
	}}}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := os.WriteFile(filepath.Join(appDir, aggregatedlog.NodeFileName(node)), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	web := "http://" + sc.rm.WebAddr().String()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(web + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// While the NodeManager is in the cluster, its page is where the logs are.
	if _, page := get("/cluster/app/" + app.String()); !strings.Contains(page, "/node/containerlogs/"+am+"/"+user) {
		t.Fatalf("the app page does not link the AM's logs to its NodeManager:\n%s", page)
	}
	os.WriteFile(exclude, []byte(sc.nms[0].NodeID().GetHost()+"\n"), 0o644)
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
