package sim

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// SLSOutput is what an Apache SLS run (slsrun.sh --output-dir) reports: each job's
// simulated start and end (jobruntime.csv) and the cluster's allocation sampled every
// second (realtimetrack.json).
type SLSOutput struct {
	Jobs []SLSJobRuntime
	// Samples are realtimetrack.json's: ms since the run began, running containers and
	// allocated memory (GB, as SLS writes it).
	Samples []SLSSample
}

// SLSJobRuntime is one row of jobruntime.csv.
type SLSJobRuntime struct {
	AppID string // the application id SLS's RM gave the job
	// TraceStartMS and TraceEndMS are the job's job.start.ms and job.end.ms;
	// SimStartMS and SimEndMS when the simulated AM started and finished.
	TraceStartMS, TraceEndMS, SimStartMS, SimEndMS int64
}

// SLSSample is one realtimetrack.json entry.
type SLSSample struct {
	MS                int64
	RunningContainers int
	AllocatedMemoryGB float64
}

// ReadSLSOutput reads an SLS output directory.
func ReadSLSOutput(dir string) (*SLSOutput, error) {
	out := &SLSOutput{}
	f, err := os.Open(filepath.Join(dir, "jobruntime.csv"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	for i, row := range rows {
		if i == 0 && len(row) > 0 && row[0] == "JobID" {
			continue
		}
		if len(row) != 5 {
			return nil, fmt.Errorf("%s line %d: want 5 fields (JobID,real_start_time,real_end_time,simulate_start_time,simulate_end_time), got %d", f.Name(), i+1, len(row))
		}
		j := SLSJobRuntime{AppID: row[0]}
		for k, p := range []*int64{&j.TraceStartMS, &j.TraceEndMS, &j.SimStartMS, &j.SimEndMS} {
			if *p, err = strconv.ParseInt(strings.TrimSpace(row[k+1]), 10, 64); err != nil {
				return nil, fmt.Errorf("%s line %d field %d: %w", f.Name(), i+1, k+2, err)
			}
		}
		out.Jobs = append(out.Jobs, j)
	}
	track, err := os.ReadFile(filepath.Join(dir, "realtimetrack.json"))
	if errors.Is(err, os.ErrNotExist) {
		return out, nil // metrics were off
	}
	if err != nil {
		return nil, err
	}
	// SLS writes the array as it goes and closes it only on a clean exit.
	track = bytes.TrimSpace(track)
	if len(track) > 0 && track[len(track)-1] != ']' {
		track = append(track, ']')
	}
	var raw []map[string]any
	if err := json.Unmarshal(track, &raw); err != nil {
		return nil, fmt.Errorf("%s/realtimetrack.json: %w", dir, err)
	}
	var t0 float64
	for i, m := range raw {
		t, _ := m["time"].(float64)
		if i == 0 {
			t0 = t
		}
		rc, _ := m["running.containers"].(float64)
		mem, _ := m["cluster.allocated.memory"].(float64)
		out.Samples = append(out.Samples, SLSSample{MS: int64(t - t0), RunningContainers: int(rc), AllocatedMemoryGB: mem})
	}
	return out, nil
}

// SLSComparison sets an SLS run beside a `bobbin sim --sls` report of the same trace.
type SLSComparison struct {
	Jobs []JobComparison
	// Apache and Bobbin summarise each side.
	Apache, Bobbin SLSSummary
}

// JobComparison is one job's runtime (start to finish, seconds) on each side; a
// negative value means the job did not finish there.
type JobComparison struct {
	ID             string
	Apache, Bobbin float64
}

// SLSSummary is one side's figures over the whole trace.
type SLSSummary struct {
	Finished int
	// Makespan is from the first submission to the last job's end (s).
	Makespan float64
	// Runtimes are the finished jobs' start-to-finish times (s): mean, median, p90, max.
	MeanRuntime, MedianRuntime, P90Runtime, MaxRuntime float64
	// MeanMemoryUtilization is allocated memory over capacity, averaged over the
	// makespan; PeakContainers the most containers running at once.
	MeanMemoryUtilization float64
	PeakContainers        int
}

// CompareSLS matches SLS's jobs to the trace's by start time (SLS names them by the
// application id its RM gave; jobs start in trace order) and summarises both sides.
// clusterMemoryMB is the trace's total node memory.
func CompareSLS(trace *Trace, apache *SLSOutput, bobbin *Report, clusterMemoryMB int64) (*SLSComparison, error) {
	type tj struct {
		id    string
		start int64
	}
	jobs := make([]tj, len(trace.Apps))
	for i, a := range trace.Apps {
		jobs[i] = tj{a.ID, int64(a.Submit) / 1e6}
	}
	sort.SliceStable(jobs, func(i, j int) bool { return jobs[i].start < jobs[j].start })
	rows := append([]SLSJobRuntime(nil), apache.Jobs...)
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].TraceStartMS != rows[j].TraceStartMS {
			return rows[i].TraceStartMS < rows[j].TraceStartMS
		}
		return rows[i].AppID < rows[j].AppID
	})
	apacheRT := map[string]float64{}
	used := make([]bool, len(rows))
	for _, j := range jobs {
		for k, r := range rows {
			if !used[k] && r.TraceStartMS == j.start {
				used[k] = true
				apacheRT[j.id] = float64(r.SimEndMS-r.SimStartMS) / 1000
				break
			}
		}
	}
	for k, r := range rows {
		if !used[k] {
			return nil, fmt.Errorf("SLS job %s (trace start %d ms) matches no job of the trace", r.AppID, r.TraceStartMS)
		}
	}
	c := &SLSComparison{}
	var aRT, bRT []float64
	for _, j := range jobs {
		jc := JobComparison{ID: j.id, Apache: -1, Bobbin: -1}
		if v, ok := apacheRT[j.id]; ok {
			jc.Apache = v
			aRT = append(aRT, v)
		}
		if v, ok := bobbin.JobCompletion[j.id]; ok {
			jc.Bobbin = v
			bRT = append(bRT, v)
		}
		c.Jobs = append(c.Jobs, jc)
	}
	c.Apache = summarise(aRT)
	c.Bobbin = summarise(bRT)
	// Makespans: from the first submission to the last end.
	var first int64 = -1
	for _, j := range jobs {
		if first < 0 || j.start < first {
			first = j.start
		}
	}
	for _, r := range rows {
		c.Apache.Makespan = max(c.Apache.Makespan, float64(r.SimEndMS-first)/1000)
	}
	for _, j := range jobs {
		if v, ok := bobbin.JobCompletion[j.id]; ok {
			c.Bobbin.Makespan = max(c.Bobbin.Makespan, float64(j.start-first)/1000+v)
		}
	}
	// SLS samples every second from its start: average over the makespan.
	var sum float64
	n := 0
	end := first + int64(c.Apache.Makespan*1000)
	for _, s := range apache.Samples {
		c.Apache.PeakContainers = max(c.Apache.PeakContainers, s.RunningContainers)
		if s.MS >= first && s.MS <= end {
			sum += s.AllocatedMemoryGB * 1024 / float64(clusterMemoryMB)
			n++
		}
	}
	if n > 0 {
		c.Apache.MeanMemoryUtilization = sum / float64(n)
	}
	c.Bobbin.MeanMemoryUtilization = bobbin.MeanUtilization["memory-mb"]
	for _, s := range bobbin.Utilization {
		c.Bobbin.PeakContainers = max(c.Bobbin.PeakContainers, int(s.Values["memory-mb"]*float64(clusterMemoryMB)/float64(DefaultSLSOptions.ContainerMemoryMB)+0.5))
	}
	return c, nil
}

func summarise(rt []float64) SLSSummary {
	s := SLSSummary{Finished: len(rt)}
	if len(rt) == 0 {
		return s
	}
	sorted := append([]float64(nil), rt...)
	sort.Float64s(sorted)
	var sum float64
	for _, v := range sorted {
		sum += v
	}
	s.MeanRuntime = sum / float64(len(sorted))
	s.MedianRuntime = sorted[(len(sorted)-1)/2]
	s.P90Runtime = sorted[min(len(sorted)-1, int(float64(len(sorted))*0.9))]
	s.MaxRuntime = sorted[len(sorted)-1]
	return s
}

// WriteMarkdown renders the comparison: a summary table, then one row per job.
func (c *SLSComparison) WriteMarkdown(w io.Writer) {
	fmt.Fprintln(w, "| | Apache SLS | bobbin sim |")
	fmt.Fprintln(w, "|---|---:|---:|")
	row := func(label, format string, a, b any) {
		fmt.Fprintf(w, "| %s | "+format+" | "+format+" |\n", label, a, b)
	}
	row("jobs finished", "%d", c.Apache.Finished, c.Bobbin.Finished)
	row("makespan, first submission to last job end (s)", "%.1f", c.Apache.Makespan, c.Bobbin.Makespan)
	row("job runtime, mean (s)", "%.1f", c.Apache.MeanRuntime, c.Bobbin.MeanRuntime)
	row("job runtime, median (s)", "%.1f", c.Apache.MedianRuntime, c.Bobbin.MedianRuntime)
	row("job runtime, p90 (s)", "%.1f", c.Apache.P90Runtime, c.Bobbin.P90Runtime)
	row("job runtime, max (s)", "%.1f", c.Apache.MaxRuntime, c.Bobbin.MaxRuntime)
	row("memory allocated, mean over the makespan (%)", "%.1f", 100*c.Apache.MeanMemoryUtilization, 100*c.Bobbin.MeanMemoryUtilization)
	row("containers running at once, most", "%d", c.Apache.PeakContainers, c.Bobbin.PeakContainers)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| job | Apache SLS runtime (s) | bobbin sim runtime (s) | difference (s) |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	for _, j := range c.Jobs {
		cell := func(v float64) string {
			if v < 0 {
				return "did not finish"
			}
			return strconv.FormatFloat(v, 'f', 1, 64)
		}
		diff := ""
		if j.Apache >= 0 && j.Bobbin >= 0 {
			d := math.Round((j.Bobbin-j.Apache)*10) / 10
			if d == 0 {
				d = 0 // not "-0.0"
			}
			diff = strconv.FormatFloat(d, 'f', 1, 64)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", j.ID, cell(j.Apache), cell(j.Bobbin), diff)
	}
}
