package nodemanager

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
)

// jmxBeans fetches /jmx from a daemon's web address, by bean name.
func jmxBeans(t *testing.T, base string) map[string]map[string]any {
	t.Helper()
	resp, err := http.Get(base + "/jmx")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var all struct{ Beans []map[string]any }
	if err := json.NewDecoder(resp.Body).Decode(&all); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, b := range all.Beans {
		out[b["name"].(string)] = b
	}
	return out
}

// The RM's and the NM's /jmx beans carry the figures of what ran (a container that exited
// 0, an application running in the default queue), and both daemons' /prom pass promtool.
func TestJMXOfBothDaemons(t *testing.T) {
	c := newCluster(t)
	ctrs := c.containers(t, 1)
	nm := c.client()
	defer nm.Close()
	if _, err := nm.Start(context.Background(), &yarnpb.ContainerLaunchContextProto{Command: []string{"exit 0"}}, ctrs[0]); err != nil {
		t.Fatal(err)
	}
	completeStatus(t, nm, ctrs[0].GetId(), 10*time.Second)
	rmWeb := "http://" + c.rm.WebAddr().String()
	// The queue's Aggregate* counters: the one container allocated (off-switch: its ask
	// named no host) and, once the NM's heartbeat told the RM, ended.
	var rm map[string]map[string]any
	testutil.Eventually(t, 10*time.Second, "the RM's QueueMetrics never counted the container's end", func() bool {
		rm = jmxBeans(t, rmWeb)
		return rm["Hadoop:service=ResourceManager,name=QueueMetrics,q0=root,q1=default"]["AggregateContainersReleased"] == 1.0
	})
	for _, name := range []string{"q0=root,q1=default", "q0=root"} {
		b := rm["Hadoop:service=ResourceManager,name=QueueMetrics,"+name]
		if b["AggregateContainersAllocated"] != 1.0 || b["AggregateOffSwitchContainersAllocated"] != 1.0 ||
			b["AggregateNodeLocalContainersAllocated"] != 0.0 || b["AggregateRackLocalContainersAllocated"] != 0.0 ||
			b["AggregateContainersReleased"] != 1.0 || b["AggregateContainersPreempted"] != 0.0 || b["AggregateMemoryMBSecondsPreempted"] != 0.0 {
			t.Errorf("QueueMetrics %s Aggregate* counters: %v", name, b)
		}
	}
	// UgiMetrics and the metrics system: one more snapshot of the RM's sources (every
	// Hadoop: bean but the metrics system's own two), so that at least one came before it
	// whichever poll above found the counters (a snapshot counts once it is taken).
	rm = jmxBeans(t, rmWeb)
	sources := 0
	for name := range rm {
		if strings.HasPrefix(name, "Hadoop:") && !strings.Contains(name, "name=MetricsSystem") {
			sources++
		}
	}
	if u := rm["Hadoop:service=ResourceManager,name=UgiMetrics"]; u == nil || u["tag.Context"] != "ugi" || u["LoginSuccessNumOps"] != 0.0 || u["GetGroupsNumOps"] == nil {
		t.Errorf("UgiMetrics (no Kerberos here: no login): %v", u)
	}
	if ms := rm["Hadoop:service=ResourceManager,name=MetricsSystem,sub=Stats"]; ms == nil || ms["NumAllSources"] != float64(sources) ||
		ms["SnapshotNumOps"].(float64) < 1 || ms["NumActiveSinks"] != 1.0 {
		t.Errorf("MetricsSystem,sub=Stats: %v, want %d sources and the earlier snapshots", ms, sources)
	}
	cm := rm["Hadoop:service=ResourceManager,name=ClusterMetrics"]
	q := rm["Hadoop:service=ResourceManager,name=QueueMetrics,q0=root,q1=default"]
	root := rm["Hadoop:service=ResourceManager,name=QueueMetrics,q0=root"]
	clientPort := c.rm.ClientAddr().(*net.TCPAddr).Port
	if b := rm["Hadoop:service=ResourceManager,name=RpcActivityForPort"+strconv.Itoa(clientPort)]; b == nil || b["RpcProcessingTimeNumOps"].(float64) < 1 {
		t.Errorf("the client port's RPC activity: %v", b)
	}
	if cm["NumActiveNMs"] != 1.0 || q["AppsSubmitted"] != 1.0 || q["AppsRunning"] != 1.0 || root["AppsRunning"] != 1.0 ||
		q["AvailableMB"].(float64) <= 0 || q["tag.Queue"] != "root.default" {
		t.Errorf("RM beans: cluster %v\nqueue %v\nroot %v", cm, q, root)
	}
	// RpcDetailedActivityForPort<client port>: the calls by method.
	if d := rm["Hadoop:service=ResourceManager,name=RpcDetailedActivityForPort"+strconv.Itoa(clientPort)]; d == nil ||
		d["GetApplicationReportNumOps"] == nil && d["SubmitApplicationNumOps"] == nil || d["tag.Context"] != "rpcdetailed" {
		t.Errorf("the client port's detailed RPC activity: %v", d)
	}
	// RMNMInfo: the live NodeManagers as the JSON string Hadoop's tools parse.
	var live []map[string]any
	if info := rm["Hadoop:service=ResourceManager,name=RMNMInfo"]; info == nil || json.Unmarshal([]byte(info["LiveNodeManagers"].(string)), &live) != nil ||
		len(live) != 1 || live[0]["NodeId"] != c.nm.NodeID() || live[0]["State"] != "RUNNING" || live[0]["AvailableMemoryMB"].(float64) <= 0 {
		t.Errorf("RMNMInfo: %v", info)
	}
	var rpcSeen bool
	for name, b := range rm {
		if strings.Contains(name, "RpcActivityForPort") && b["RpcProcessingTimeNumOps"].(float64) > 0 && b["ReceivedBytes"].(float64) > 0 {
			rpcSeen = true
		}
	}
	if !rpcSeen {
		t.Errorf("no RpcActivityForPort bean with calls: %v", rm)
	}
	nmb := jmxBeans(t, "http://"+c.nm.HTTPAddress())["Hadoop:service=NodeManager,name=NodeManagerMetrics"]
	if nmb["ContainersLaunched"] != 1.0 || nmb["ContainersCompleted"] != 1.0 || nmb["ContainersFailed"] != 0.0 || nmb["AvailableVCores"] != 8.0 {
		t.Errorf("NM beans: %v", nmb)
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not installed (Debian package prometheus): /prom not linted")
	}
	for _, base := range []string{rmWeb, "http://" + c.nm.HTTPAddress()} {
		resp, err := http.Get(base + "/prom")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		f, _ := os.CreateTemp(t.TempDir(), "prom")
		f.Write(body)
		f.Seek(0, 0)
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = f
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics of %s/prom: %v\n%s", base, err, out)
		}
		if base == rmWeb {
			if ms := jmxBeans(t, rmWeb)["Hadoop:service=ResourceManager,name=MetricsSystem,sub=Stats"]; ms["PublishNumOps"].(float64) < 1 || ms["Sink_prometheusNumOps"] != ms["PublishNumOps"] {
				t.Errorf("a /prom scrape is not counted as the metrics system's publish: %v", ms)
			}
		}
		// Ports are labels, not parts of names; the process is a Go one.
		text := string(body)
		if strings.Contains(text, "for_port") || !regexp.MustCompile(`rpc_activity_[a-z_]+\{[^}]*port="\d+"`).MatchString(text) ||
			!strings.Contains(text, "go_memstats_heap_alloc_bytes") || strings.Contains(text, "jvm_metrics_") {
			t.Errorf("%s/prom: ports in names, or no port labels, or no Go runtime figures:\n%.3000s", base, text)
		}
	}
}

// The NodeManager's web port answers OPTIONS as the RM's does (Hadoop's client
// authenticator opens the log endpoints with it).
func TestNodeManagerWebAnswersOptions(t *testing.T) {
	c := newCluster(t)
	req, _ := http.NewRequest(http.MethodOptions, "http://"+c.nm.HTTPAddress()+"/ws/v1/node/info", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Allow") == "" {
		t.Fatalf("OPTIONS: %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
}
