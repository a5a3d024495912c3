package resourcemanager

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/client/amclient"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/tools/nmsim"
)

// The RM's web UI pages render from the live state: the cluster page lists the running
// application (and filters by state), its page shows its attempt and running containers
// with their log links, the scheduler page the queue tree, the nodes page the node.
func TestWebUIPages(t *testing.T) {
	sc := newSimCluster(t, testConf(), 1, nil)
	running, release := make(chan struct{}, 1), make(chan struct{})
	defer close(release)
	sc.am = func(ctx context.Context, l *nmsim.Launch, am *amclient.Client) int32 {
		if _, err := am.Register(ctx, "am-host", 4242, "http://am-host:8080/ui"); err != nil {
			t.Errorf("register: %v", err)
			return 1
		}
		am.Request(20, "*", 2048, 1, 1)
		for got := 0; got < 1; {
			resp, err := am.Allocate(ctx, 0.25)
			if err != nil {
				if ctx.Err() == nil {
					t.Errorf("allocate: %v", err)
				}
				return 1
			}
			for _, c := range resp.GetAllocatedContainers() {
				if err := startCommand(ctx, am, l.ID.Attempt, c, "run-until-stopped"); err != nil {
					t.Errorf("start: %v", err)
					return 1
				}
				got++
			}
			time.Sleep(10 * time.Millisecond)
		}
		running <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return 0
	}
	app := records.AppIDFromProto(sc.submit(1, 0)).String()
	select {
	case <-running:
	case <-time.After(20 * time.Second):
		t.Fatal("the AM did not get its container")
	}
	attempt := strings.Replace(app, "application_", "appattempt_", 1) + "_000001"
	amContainer := strings.Replace(app, "application_", "container_", 1) + "_01_000001"
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
	for path, wants := range map[string][]string{
		"/cluster":                {`<a href="/cluster/app/` + app + `">`, "RUNNING", "Apps running", "/proxy/" + app + "/"},
		"/cluster/apps/RUNNING":   {app},
		"/cluster/app/" + app:     {"appattempt_", "_000002", "/node/containerlogs/", "3072 MB", "Running containers"},
		"/cluster/scheduler":      {`id="queue-default"`, "Quota group", "capacity", "user limit 100% × factor 1", "AM resources", "maximum allocation", `<td><a href="/cluster/app/` + app + `">`},
		"/cluster/nodes":          {"RUNNING", "/default-rack", "3072 MB"},
		"/static/bobbin.js":       {"sortable", "table.paged", "button.kill"},
		"/static/hadoop-st.png":   {"\x89PNG"}, // the proxied MR AM's pages show it
		"/cluster/failure/" + app: {"sent the proxy's request back"},
		// The Java RM's other pages (the MR AM's navigation links to /cluster/cluster).
		"/cluster/cluster":                       {"Cluster ID", "ResourceManager version", "1 submitted", `href="/cluster/nodes/running">1 active`},
		"/cluster/appattempt/" + attempt:         {`href="/cluster/app/` + app + `"`, "RUNNING", `href="/cluster/container/` + amContainer + `"`, "_000002"},
		"/cluster/container/" + amContainer:      {`href="/cluster/appattempt/` + attempt + `"`, "RUNNING", "/node/containerlogs/", "GUARANTEED"},
		"/cluster/nodes/running":                 {"RUNNING nodes", "3072 MB"},
		"/cluster/nodes/lost":                    {"No node is LOST."},
		"/cluster/nodelabels":                    {"The cluster has no node labels."},
		"/cluster/app/" + app + "?user.name=bob": {`class="kill" data-app="` + app + `"`},
	} {
		code, body := get(path)
		if code != 200 {
			t.Errorf("%s: %d\n%.500s", path, code, body)
			continue
		}
		for _, w := range wants {
			if !strings.Contains(body, w) {
				t.Errorf("%s lacks %q:\n%.3000s", path, w, body)
			}
		}
	}
	if _, body := get("/cluster/apps/FINISHED"); strings.Contains(body, `href="/cluster/app/`+app) {
		t.Errorf("the FINISHED filter lists the running application")
	}
	if code, _ := get("/cluster/app/application_1_0042"); code != http.StatusNotFound {
		t.Errorf("unknown application page: %d", code)
	}
	// The scheduler's health (3.x's scheduler.health): the last allocation is the task
	// container, in the default queue; a pass has run.
	_, raw := get("/ws/v1/cluster/scheduler")
	var sched struct {
		Scheduler struct {
			SchedulerInfo struct {
				Health struct {
					LastRun        int64 `json:"lastrun"`
					OperationsInfo []struct {
						Operation, NodeID, ContainerID, Queue string
					} `json:"operationsInfo"`
					LastRunDetails []struct {
						Operation string
						Count     int64
					} `json:"lastRunDetails"`
				} `json:"health"`
			} `json:"schedulerInfo"`
		} `json:"scheduler"`
	}
	if err := json.Unmarshal([]byte(raw), &sched); err != nil {
		t.Fatal(err)
	}
	h := sched.Scheduler.SchedulerInfo.Health
	if h.LastRun <= 0 || len(h.OperationsInfo) != 4 || h.OperationsInfo[0].Operation != "last-allocation" ||
		h.OperationsInfo[0].ContainerID != strings.Replace(app, "application_", "container_", 1)+"_01_000002" || h.OperationsInfo[0].Queue != "default" ||
		!strings.Contains(h.OperationsInfo[0].NodeID, ":") || h.OperationsInfo[2].ContainerID != "N/A" || len(h.LastRunDetails) != 3 {
		t.Errorf("scheduler health: %+v\n%.2000s", h, raw)
	}
	// ClusterMetrics' AM delays: the AM was launched once and registered once.
	_, jmx := get("/jmx?qry=Hadoop:service=ResourceManager,name=ClusterMetrics")
	var beans struct {
		Beans []map[string]any `json:"beans"`
	}
	if err := json.Unmarshal([]byte(jmx), &beans); err != nil || len(beans.Beans) != 1 || beans.Beans[0]["AMLaunchDelayNumOps"] != 1.0 ||
		beans.Beans[0]["AMRegisterDelayNumOps"] != 1.0 || beans.Beans[0]["AMLaunchDelayAvgTime"].(float64) <= 0 {
		t.Errorf("ClusterMetrics' AM delays: %v\n%s", err, jmx)
	}
	for path, want := range map[string]int{"/cluster/appattempt/appattempt_1_0042_000001": http.StatusNotFound, "/cluster/appattempt/nonsense": http.StatusBadRequest,
		"/cluster/container/nonsense": http.StatusBadRequest, "/cluster/nodes/sleepy": http.StatusBadRequest} {
		if code, body := get(path); code != want {
			t.Errorf("%s: %d, want %d\n%.300s", path, code, want, body)
		}
	}
	// A container that is not running: said so, with its application.
	gone := strings.Replace(app, "application_", "container_", 1) + "_01_000099"
	if _, body := get("/cluster/container/" + gone); !strings.Contains(body, gone+" is not running") || !strings.Contains(body, `href="/cluster/app/`+app+`"`) {
		t.Errorf("an ended container's page:\n%.2000s", body)
	}
}
