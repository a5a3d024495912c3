package webapp

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metrics "github.com/rcrowley/go-metrics"
	"github.com/sirupsen/logrus"

	"github.com/bobbin-yarn/bobbin/conf"
)

func TestObjectNameMatches(t *testing.T) {
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"Hadoop:service=ResourceManager,name=ClusterMetrics", "Hadoop:service=ResourceManager,name=ClusterMetrics", true},
		{"Hadoop:service=ResourceManager,name=QueueMetrics,*", "Hadoop:service=ResourceManager,name=QueueMetrics,q0=root,q1=default", true},
		{"Hadoop:service=ResourceManager,name=QueueMetrics,q0=root", "Hadoop:service=ResourceManager,name=QueueMetrics,q0=root,q1=default", false},
		{"Hadoop:*", "Hadoop:service=NodeManager,name=ShuffleMetrics", true},
		{"Hadoop:name=RpcActivity*,*", "Hadoop:service=ResourceManager,name=RpcActivityForPort8032", true},
		{"java.lang:type=Memory", "Hadoop:service=NodeManager,name=JvmMetrics", false},
	} {
		if got := objectNameMatches(c.pattern, c.name); got != c.want {
			t.Errorf("%s ~ %s = %v", c.pattern, c.name, got)
		}
	}
}

func TestSnake(t *testing.T) {
	for in, want := range map[string]string{"NumActiveNMs": "num_active_nms", "AppsRunning": "apps_running", "running_0": "running_0",
		"RpcQueueTimeAvgTime": "rpc_queue_time_avg_time", "rm.queue.default.AllocatedMB": "rm_queue_default_allocated_mb", "JvmMetrics": "jvm_metrics"} {
		if got := snake(in); got != want {
			t.Errorf("snake(%q) = %q, want %q", in, got, want)
		}
	}
}

// The daemon pages on a real HTTP server: /jmx with its query forms, /conf, /logLevel,
// /stacks, and /prom, which promtool (Prometheus' own checker) passes when installed.
func TestDaemonPages(t *testing.T) {
	c := conf.New()
	c.Set("yarn.nodemanager.resource.memory-mb", "2048")
	c.Set("fs.s3a.secret.key", "hush")
	reg := metrics.NewRegistry()
	metrics.GetOrRegisterCounter("rm.AppsSubmitted", reg).Inc(3)
	metrics.GetOrRegisterGauge("rm.queue.default.AllocatedMB", reg).Update(1024)
	metrics.GetOrRegisterGaugeFloat64("nm.borrowed.FreeCpuShare", reg).Update(0.5)
	metrics.GetOrRegisterTimer("rpc.ClientRMService.ApplicationClientProtocol.getApplicationReport", reg).Update(3 * time.Millisecond)
	metrics.GetOrRegisterMeter("rm.allocations", reg).Mark(5)
	metrics.GetOrRegisterHistogram("rm.sizes", reg, metrics.NewUniformSample(10)).Update(7)
	log := logrus.New()
	log.SetOutput(io.Discard)
	d := &Daemon{Service: "ResourceManager", Host: "h", Conf: c, Log: log, Metrics: reg, Started: time.Now().Add(-time.Minute),
		Beans: func() []Bean {
			return []Bean{
				{Name: "Hadoop:service=ResourceManager,name=ClusterMetrics", ModelerType: "ClusterMetrics",
					Attrs: []Attr{{"tag.Hostname", "h"}, {"NumActiveNMs", int32(2)}}},
				{Name: "Hadoop:service=ResourceManager,name=QueueMetrics,q0=root,q1=default", ModelerType: "QueueMetrics,q0=root,q1=default",
					Attrs: []Attr{{"tag.Queue", "root.default"}, {"AppsRunning", int64(1)}, {"AllocatedMB", int64(1024)}, {"RpcQueueTimeAvgTime", 1.5}}},
			}
		}}
	mux := http.NewServeMux()
	d.Install(mux)
	log.Warn("counted")
	srv := httptest.NewServer(mux)
	defer srv.Close()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	_, body := get("/jmx")
	var all struct{ Beans []map[string]any }
	if err := json.Unmarshal([]byte(body), &all); err != nil {
		t.Fatalf("/jmx: %v\n%s", err, body)
	}
	names := map[string]map[string]any{}
	for _, b := range all.Beans {
		names[b["name"].(string)] = b
	}
	jvm := names["Hadoop:service=ResourceManager,name=JvmMetrics"]
	if names["Hadoop:service=ResourceManager,name=ClusterMetrics"]["NumActiveNMs"] != 2.0 || jvm == nil || jvm["MemHeapUsedM"].(float64) <= 0 ||
		jvm["LogWarn"] != 1.0 || names["java.lang:type=Runtime"]["Uptime"].(float64) < 60000 {
		t.Fatalf("/jmx beans: %s", body)
	}
	if strings.Index(body, `"name"`) > strings.Index(body, `"modelerType"`) {
		t.Errorf("name must come first: %.200s", body)
	}
	if _, body := get("/jmx?qry=Hadoop:service=ResourceManager,name=QueueMetrics,*"); strings.Count(body, `"name"`) != 1 || !strings.Contains(body, "q1=default") {
		t.Errorf("qry: %s", body)
	}
	if _, body := get("/jmx?get=Hadoop:service=ResourceManager,name=ClusterMetrics::NumActiveNMs"); !strings.Contains(body, `"NumActiveNMs": 2`) {
		t.Errorf("get: %s", body)
	}
	if code, body := get("/conf"); code != 200 || !strings.Contains(body, "<name>yarn.nodemanager.resource.memory-mb</name><value>2048</value>") ||
		strings.Contains(body, "hush") {
		t.Errorf("/conf: %d %.300s", code, body)
	}
	if _, body := get("/conf?format=json&name=yarn.nodemanager.resource.memory-mb"); !strings.Contains(body, `"value":"2048"`) {
		t.Errorf("/conf json: %s", body)
	}
	if code, body := get("/logLevel?log=org.apache.hadoop.yarn&level=DEBUG"); code != 200 || !strings.Contains(body, "Effective Level: <b>DEBUG</b>") || log.GetLevel() != logrus.DebugLevel {
		t.Errorf("/logLevel: %d %s", code, body)
	}
	if code, body := get("/logLevel?log=x&level=LOUD"); code != 200 || !strings.Contains(body, "Bad Level : <b>LOUD</b>") {
		t.Errorf("/logLevel with a bad level: %d %s", code, body)
	}
	if _, body := get("/stacks"); !strings.Contains(body, "goroutine ") {
		t.Errorf("/stacks: %.200s", body)
	}
	_, prom := get("/prom")
	t.Logf("/prom:\n%s", prom)
	for _, want := range []string{`cluster_metrics_num_active_nms{hostname="h",service="ResourceManager"} 2`,
		`queue_metrics_allocated_bytes{q0="root",q1="default",queue="root.default",service="ResourceManager"} 1.073741824e+09`,
		"# TYPE bobbin_rm_apps_submitted_total counter", `bobbin_rm_apps_submitted_total 3`, "# TYPE go_goroutines gauge", "process_resident_memory_bytes",
		"# TYPE go_sched_pauses_total_gc_seconds histogram", "go_gc_heap_live_bytes",
		`metrics_system_num_all_sources{context="metricssystem"`, "# TYPE metrics_system_dropped_pub_all_total counter"} {
		if !strings.Contains(prom, want) {
			t.Errorf("/prom lacks %q:\n%s", want, prom)
		}
	}
	if strings.Contains(prom, "jvm_metrics_") {
		t.Error("/prom exports JvmMetrics for a Go process")
	}
	if _, metricsText := get("/metrics"); !strings.Contains(metricsText, "# TYPE bobbin_rm_apps_submitted_total counter") {
		t.Errorf("/metrics is not the Prometheus exposition:\n%.500s", metricsText)
	}
	if _, js := get("/metrics?format=json"); !strings.Contains(js, `"rm.AppsSubmitted":{"count":3}`) {
		t.Errorf("/metrics?format=json: %.300s", js)
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not installed (Debian package prometheus): /prom not linted")
	}
	f, _ := os.CreateTemp(t.TempDir(), "prom")
	f.WriteString(prom)
	f.Seek(0, 0)
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = f
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

// logDirWriter is a log output in a directory, as bobbin's rolling file sink.
type logDirWriter struct {
	io.Writer
	dir string
}

func (l logDirWriter) LogDir() string { return l.dir }

// /logs/ lists the daemon's log directory and serves its files (administrators only, as
// the Java daemons' HttpServer2); a daemon logging to standard error says so.
func TestLogsPage(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "yarn-u-resourcemanager-h.log"), []byte("a line\n"), 0o644)
	log := logrus.New()
	log.SetOutput(logDirWriter{io.Discard, dir})
	mux := http.NewServeMux()
	(&Daemon{Service: "ResourceManager", Log: log}).Install(mux)
	get := func(path string) string {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec.Body.String()
	}
	if body := get("/logs/"); !strings.Contains(body, `href="yarn-u-resourcemanager-h.log"`) {
		t.Errorf("/logs/ listing: %s", body)
	}
	if body := get("/logs/yarn-u-resourcemanager-h.log"); body != "a line\n" {
		t.Errorf("a log file: %q", body)
	}
	mux = http.NewServeMux()
	(&Daemon{Service: "ResourceManager", Log: logrus.New()}).Install(mux)
	if body := get("/logs/"); !strings.Contains(body, "standard error") {
		t.Errorf("/logs/ of a daemon without files: %s", body)
	}
}
