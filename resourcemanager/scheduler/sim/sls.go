package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Apache's Scheduler Load Simulator (SLS) reads job traces in its own JSON format: a
// stream of job objects (not an array), each with its queue, start time and tasks, and
// optionally a node file. ReadSLS turns them into a Trace, with SLS's defaults for what the
// format leaves out (yarn.sls.* keys), so the same workload runs in `bobbin sim` and in
// SLS.

// SLSOptions are the SLS settings the trace format does not carry.
type SLSOptions struct {
	NodeMemoryMB      int64 // yarn.sls.nm.memory.mb (10240)
	NodeVCores        int64 // yarn.sls.nm.vcores (10)
	ContainerMemoryMB int64 // yarn.sls.container.memory.mb (1024)
	ContainerVCores   int64 // yarn.sls.container.vcores (1)
}

// DefaultSLSOptions are SLS's defaults (sls-runner.xml).
var DefaultSLSOptions = SLSOptions{NodeMemoryMB: 10240, NodeVCores: 10, ContainerMemoryMB: 1024, ContainerVCores: 1}

// What SLS 2.7's MRAMSimulator asks for, fixed in its code.
const (
	slsAMMemoryMB     = 1024
	slsAMVCores       = 1
	slsPriorityAM     = 1
	slsPriorityMap    = 20
	slsPriorityReduce = 10
)

type slsJob struct {
	AMType  string    `json:"am.type"`
	StartMS *int64    `json:"job.start.ms"`
	EndMS   int64     `json:"job.end.ms"`
	Queue   string    `json:"job.queue.name"`
	ID      string    `json:"job.id"`
	User    string    `json:"job.user"`
	Tasks   []slsTask `json:"job.tasks"`
}

type slsTask struct {
	Host     string `json:"container.host"`
	StartMS  int64  `json:"container.start.ms"`
	EndMS    int64  `json:"container.end.ms"`
	Priority int32  `json:"container.priority"`
	Type     string `json:"container.type"`
}

type slsNodes struct {
	Rack  string `json:"rack"`
	Nodes []struct {
		Node string `json:"node"`
	} `json:"nodes"`
}

// ReadSLS reads an SLS job trace (and, when nodes is not nil, an SLS node file; otherwise
// the nodes are the hosts the tasks name, as SLS derives them).
func ReadSLS(jobs io.Reader, nodes io.Reader, o SLSOptions) (*Trace, error) {
	t := &Trace{Queues: map[string]string{}}
	hosts := map[string]string{} // node -> rack
	dec := json.NewDecoder(jobs)
	queues := map[string]bool{}
	for n := 1; ; n++ {
		var j slsJob
		err := dec.Decode(&j)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("sls trace job %d: %w", n, err)
		}
		if j.StartMS == nil || j.Queue == "" {
			return nil, fmt.Errorf("sls trace job %d (%q): needs job.start.ms and job.queue.name", n, j.ID)
		}
		if j.ID == "" {
			j.ID = "job_" + strconv.Itoa(n)
		}
		app := AppSpec{ID: j.ID, Submit: Duration(time.Duration(*j.StartMS) * time.Millisecond), Queue: j.Queue, User: j.User}
		if j.AMType != "" && j.AMType != "mapreduce" {
			return nil, fmt.Errorf("sls trace job %s: am.type %q: only mapreduce (MRAMSimulator) is modelled", j.ID, j.AMType)
		}
		// As SLS's MRAMSimulator: the AM asks for its own container first (1024 MB, one
		// vcore, priority 1), then for every map (priority 20), and for the reduces
		// (priority 10) once all maps have finished.
		app.Asks = append(app.Asks, AskSpec{Resources: map[string]int64{"memory-mb": slsAMMemoryMB, "vcores": slsAMVCores},
			Count: 1, Priority: slsPriorityAM, AM: true})
		type shape struct {
			dur    int64
			reduce bool
		}
		counts := map[shape]int{}
		var order []shape
		for i, task := range j.Tasks {
			if task.EndMS < task.StartMS {
				return nil, fmt.Errorf("sls trace job %s task %d: container.end.ms %d before container.start.ms %d", j.ID, i, task.EndMS, task.StartMS)
			}
			if task.Type != "map" && task.Type != "reduce" {
				return nil, fmt.Errorf("sls trace job %s task %d: container.type %q: want map or reduce", j.ID, i, task.Type)
			}
			s := shape{task.EndMS - task.StartMS, task.Type == "reduce"}
			if counts[s] == 0 {
				order = append(order, s)
			}
			counts[s]++
			if task.Host != "" {
				rack, node := splitSLSHost(task.Host)
				hosts[node] = rack
			}
		}
		for _, s := range order {
			ask := AskSpec{Resources: map[string]int64{"memory-mb": o.ContainerMemoryMB, "vcores": o.ContainerVCores},
				Count: counts[s], Duration: Duration(time.Duration(s.dur) * time.Millisecond), Priority: slsPriorityMap}
			if s.reduce {
				ask.Priority, ask.Stage = slsPriorityReduce, 1
			}
			app.Asks = append(app.Asks, ask)
		}
		queues[j.Queue] = true
		t.Apps = append(t.Apps, app)
	}
	if nodes != nil {
		hosts = map[string]string{}
		dec := json.NewDecoder(nodes)
		for {
			var ns slsNodes
			err := dec.Decode(&ns)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("sls node file: %w", err)
			}
			for _, n := range ns.Nodes {
				hosts[n.Node] = "/" + strings.TrimPrefix(ns.Rack, "/")
			}
		}
	}
	if len(hosts) == 0 {
		return nil, errors.New("sls trace: no nodes (no node file, and no task names a container.host)")
	}
	names := make([]string, 0, len(hosts))
	for h := range hosts {
		names = append(names, h)
	}
	sort.Strings(names)
	for _, h := range names {
		t.Nodes = append(t.Nodes, NodeSpec{ID: h + ":8041", Rack: hosts[h], Resources: map[string]int64{"memory-mb": o.NodeMemoryMB, "vcores": o.NodeVCores}})
	}
	// SLS's queues are leaves of root with equal capacity unless a capacity-scheduler.xml
	// says otherwise (pass one with the trace's Settings or CapacityScheduler).
	qs := make([]string, 0, len(queues))
	for q := range queues {
		qs = append(qs, q)
	}
	sort.Strings(qs)
	t.Queues["root.queues"] = strings.Join(qs, ",")
	share := 100.0 / float64(len(qs))
	for i, q := range qs {
		c := share
		if i == len(qs)-1 {
			c = 100 - share*float64(len(qs)-1) // the capacities sum to exactly 100
		}
		t.Queues["root."+q+".capacity"] = strconv.FormatFloat(c, 'f', -1, 64)
	}
	return t, nil
}

// splitSLSHost splits "/rack/node" (SLS's container.host) into "/rack" and "node".
func splitSLSHost(h string) (rack, node string) {
	h = strings.TrimPrefix(h, "/")
	if i := strings.LastIndexByte(h, '/'); i >= 0 {
		return "/" + h[:i], h[i+1:]
	}
	return "/default-rack", h
}

// LoadSLS reads an SLS job trace file and an optional node file.
func LoadSLS(jobsPath, nodesPath string, o SLSOptions) (*Trace, error) {
	jf, err := os.Open(jobsPath)
	if err != nil {
		return nil, err
	}
	defer jf.Close()
	var nr io.Reader
	if nodesPath != "" {
		nf, err := os.Open(nodesPath)
		if err != nil {
			return nil, err
		}
		defer nf.Close()
		nr = nf
	}
	t, err := ReadSLS(jf, nr, o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", jobsPath, err)
	}
	return t, nil
}
