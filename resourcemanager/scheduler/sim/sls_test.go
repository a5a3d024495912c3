package sim

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An SLS job trace in Apache SLS's format: concatenated job objects.
const slsJobs = `{
  "am.type" : "mapreduce",
  "job.start.ms" : 0,
  "job.end.ms" : 95375,
  "job.queue.name" : "sls_queue_1",
  "job.id" : "job_1",
  "job.user" : "default",
  "job.tasks" : [ {
    "container.host" : "/default-rack/node1",
    "container.start.ms" : 6664,
    "container.end.ms" : 23707,
    "container.priority" : 20,
    "container.type" : "map"
  }, {
    "container.host" : "/default-rack/node3",
    "container.start.ms" : 6665,
    "container.end.ms" : 23708,
    "container.priority" : 20,
    "container.type" : "map"
  }, {
    "container.host" : "/rack2/node2",
    "container.start.ms" : 7000,
    "container.end.ms" : 30000,
    "container.priority" : 10,
    "container.type" : "reduce"
  } ]
}
{
  "am.type" : "mapreduce",
  "job.start.ms" : 105204,
  "job.end.ms" : 197256,
  "job.queue.name" : "sls_queue_2",
  "job.id" : "job_2",
  "job.user" : "default",
  "job.tasks" : [ {
    "container.host" : "/default-rack/node1",
    "container.start.ms" : 111822,
    "container.end.ms" : 133985,
    "container.priority" : 20,
    "container.type" : "map"
  } ]
}`

func TestReadSLSTraceAndRunIt(t *testing.T) {
	tr, err := ReadSLS(strings.NewReader(slsJobs), nil, DefaultSLSOptions)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Apps) != 2 || len(tr.Nodes) != 3 || tr.Queues["root.queues"] != "sls_queue_1,sls_queue_2" || tr.Queues["root.sls_queue_2.capacity"] != "50" {
		t.Fatalf("trace %+v", tr)
	}
	a := tr.Apps[0]
	// MRAMSimulator's shape: the AM container, the maps, then (stage 1) the reduces.
	if a.ID != "job_1" || a.Queue != "sls_queue_1" || len(a.Asks) != 3 || !a.Asks[0].AM || a.Asks[0].Priority != 1 ||
		a.Asks[1].Count != 2 || a.Asks[1].Duration != Duration(17043*time.Millisecond) || a.Asks[1].Priority != 20 || a.Asks[1].Stage != 0 ||
		a.Asks[1].Resources["memory-mb"] != 1024 || a.Asks[2].Priority != 10 || a.Asks[2].Stage != 1 {
		t.Fatalf("job_1 %+v", a)
	}
	if time.Duration(tr.Apps[1].Submit) != 105204*time.Millisecond {
		t.Errorf("job_2 submitted at %v", time.Duration(tr.Apps[1].Submit))
	}
	if tr.Nodes[1].ID != "node2:8041" || tr.Nodes[1].Rack != "/rack2" || tr.Nodes[0].Resources["memory-mb"] != 10240 {
		t.Errorf("nodes %+v", tr.Nodes)
	}
	rep, err := Run(tr)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Allocations != 6 || len(rep.JobCompletion) != 2 || len(rep.NeverRan) != 0 {
		t.Fatalf("report %+v", rep)
	}
	// job_1: AM and maps at 0, the reduce once the maps are done (17.043 s) for 23 s,
	// then the AM ends; job_2: one map of 22.163 s.
	if rep.JobCompletion["job_1"] != 40.043 || rep.JobCompletion["job_2"] != 22.163 {
		t.Errorf("job completion %v", rep.JobCompletion)
	}
	var reduceAt float64 = -1
	for _, p := range rep.Placements {
		if p.App == "job_1" && p.Time > 0 {
			reduceAt = p.Time
		}
	}
	if reduceAt != 17.043 {
		t.Errorf("job_1's reduce placed at %v s, want after its maps, 17.043 s: %+v", reduceAt, rep.Placements)
	}
	// A node file replaces the hosts the tasks name.
	tr, err = ReadSLS(strings.NewReader(slsJobs), strings.NewReader(`{"rack":"default-rack","nodes":[{"node":"a"},{"node":"b"}]}`), DefaultSLSOptions)
	if err != nil || len(tr.Nodes) != 2 || tr.Nodes[0].ID != "a:8041" || tr.Nodes[0].Rack != "/default-rack" {
		t.Fatalf("with node file: %+v %v", tr, err)
	}
	for _, bad := range []string{`{"job.queue.name":"q"}`, `{"job.start.ms":0}`, `{"job.start.ms":0,"job.queue.name":"q","job.tasks":[{"container.start.ms":5,"container.end.ms":1,"container.type":"map"}]}`,
		`{"job.start.ms":0,"job.queue.name":"q","job.tasks":[{"container.start.ms":1,"container.end.ms":5,"container.type":"shuffle"}]}`,
		`{"job.start.ms":0,"job.queue.name":"q","am.type":"spark"}`, `{`} {
		if _, err := ReadSLS(strings.NewReader(bad), nil, DefaultSLSOptions); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

// An SLS output directory as slsrun.sh writes it, compared with a bobbin sim report.
func TestCompareSLSOutput(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "jobruntime.csv"), []byte("JobID,real_start_time,real_end_time,simulate_start_time,simulate_end_time\n"+
		"application_1_0002,105204,197256,105210,130000\napplication_1_0001,0,95375,2,45002\n"), 0o644)
	// Unterminated, as when SLS is stopped: the reader closes the array.
	os.WriteFile(filepath.Join(dir, "realtimetrack.json"), []byte(`[{"time":1000,"running.containers":0,"cluster.allocated.memory":0.0}
,{"time":2000,"running.containers":4,"cluster.allocated.memory":4.0}
,{"time":3000,"running.containers":2,"cluster.allocated.memory":2.0}`), 0o644)
	out, err := ReadSLSOutput(dir)
	if err != nil || len(out.Jobs) != 2 || len(out.Samples) != 3 || out.Samples[1].MS != 1000 || out.Samples[1].RunningContainers != 4 {
		t.Fatalf("%+v %v", out, err)
	}
	tr, err := ReadSLS(strings.NewReader(slsJobs), nil, DefaultSLSOptions)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(tr)
	if err != nil {
		t.Fatal(err)
	}
	c, err := CompareSLS(tr, out, rep, 3*10240)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Jobs) != 2 || c.Jobs[0].ID != "job_1" || c.Jobs[0].Apache != 45 || c.Jobs[0].Bobbin != 40.043 ||
		c.Jobs[1].Apache != 24.79 || c.Apache.Finished != 2 || c.Apache.Makespan != 130 || c.Apache.PeakContainers != 4 ||
		math.Abs(c.Bobbin.Makespan-127.367) > 1e-9 {
		t.Fatalf("%+v", c)
	}
	var b strings.Builder
	c.WriteMarkdown(&b)
	if !strings.Contains(b.String(), "| job_1 | 45.0 | 40.0 | -5.0 |") {
		t.Errorf("markdown:\n%s", b.String())
	}
	// A job SLS ran that the trace does not have is an error, not a silent mismatch.
	out.Jobs = append(out.Jobs, SLSJobRuntime{AppID: "application_1_0003", TraceStartMS: 7})
	if _, err := CompareSLS(tr, out, rep, 3*10240); err == nil {
		t.Error("an unmatched SLS job was accepted")
	}
	os.WriteFile(filepath.Join(dir, "jobruntime.csv"), []byte("JobID,real_start_time\napplication_1_0001,0\n"), 0o644)
	if _, err := ReadSLSOutput(dir); err == nil || !strings.Contains(err.Error(), "want 5 fields") {
		t.Errorf("short row: %v", err)
	}
}
