package sim

import (
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
