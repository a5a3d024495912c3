package webapp

import (
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	metrics "github.com/rcrowley/go-metrics"
)

// The Prometheus exposition (/prom, and /metrics where scrapers look): the daemon's
// beans and go-metrics as families with their types (counters for what only grows, with
// _total; gauges for the rest), with what varies (ports, queues, users, RPC calls) in
// labels, not names, in base units (bytes, seconds); the JvmMetrics bean is left to /jmx:
// the Go runtime's and the process's own collectors (go_*, process_*) describe this
// process. Written by the Prometheus Go client, so types, escaping and content
// negotiation are its.

// promHandler is the daemon's exposition handler, built once.
func (d *Daemon) promHandler() http.Handler {
	d.promOnce.Do(func() {
		reg := prometheus.NewRegistry()
		// Beside the Go collector's defaults: the stop-the-world pauses for GC as a
		// histogram (go_sched_pauses_total_gc_seconds, whose tail a summary hides) and
		// the live heap after the last GC (go_gc_heap_live_bytes).
		goc := collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.GoRuntimeMetricsRule{
			Matcher: regexp.MustCompile(`^/sched/pauses/total/gc:seconds$|^/gc/heap/live:bytes$`)}))
		reg.MustRegister(goc, collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), daemonCollector{d})
		d.prom = promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	})
	return d.prom
}

// serveProm answers a scrape, timed as the metrics system's publish.
func (d *Daemon) serveProm(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	d.promHandler().ServeHTTP(w, r)
	d.timers()
	d.publishes.UpdateSince(start)
}

// daemonCollector turns the beans and go-metrics into families at each scrape. It is
// unchecked (Describe sends nothing): its families change with the queues and ports.
type daemonCollector struct{ d *Daemon }

func (daemonCollector) Describe(chan<- *prometheus.Desc) {}

func (c daemonCollector) Collect(ch chan<- prometheus.Metric) {
	fams := map[string]*promFamily{}
	add := func(name, help string, counter bool, labels map[string]string, v float64) {
		if counter {
			name += "_total"
		}
		f := fams[name]
		if f == nil {
			f = &promFamily{help: help, counter: counter}
			fams[name] = f
		}
		f.samples = append(f.samples, promSample{labels: labels, value: v})
	}
	for _, b := range c.d.AllBeans() {
		record, labels := beanLabels(b)
		// JvmMetrics: the Go and process collectors say it; UgiMetrics: its timers are
		// the registry's (ugi.*), exported below.
		if record == "" || record == "JvmMetrics" || record == "UgiMetrics" {
			continue
		}
		for _, a := range b.Attrs {
			v, ok := number(a.Value)
			if !ok || strings.HasPrefix(a.Key, "tag.") {
				continue
			}
			name, scale := promName(record, a.Key)
			add(name, fmt.Sprintf("%s of %s", a.Key, b.Name), cumulative(record, a.Key), labels, v*scale)
		}
	}
	if c.d.Metrics != nil {
		c.d.Metrics.Each(func(name string, m any) { goMetric(add, name, m) })
	}
	for name, f := range fams {
		f.emit(ch, name)
	}
}

// goMetric adds a go-metrics value: a counter or meter as a counter, a gauge as a gauge,
// a timer's calls as a counter and its times as gauges; a queue's or an RPC method's
// name parts become labels.
func goMetric(add func(name, help string, counter bool, labels map[string]string, v float64), name string, m any) {
	var labels map[string]string
	parts := strings.Split(name, ".")
	switch {
	case len(parts) == 4 && parts[0] == "rpc":
		// rpc.<server>.<protocol>.<method>: one family, the call in labels.
		if t, ok := m.(metrics.Timer); ok {
			s := t.Snapshot()
			l := map[string]string{"server": parts[1], "protocol": strings.TrimSuffix(parts[2], "PB"), "method": parts[3]}
			add("bobbin_rpc_calls", "IPC calls answered", true, l, float64(s.Count()))
			add("bobbin_rpc_call_mean_seconds", "IPC call time, mean", false, l, s.Mean()/1e9)
			add("bobbin_rpc_call_p50_seconds", "IPC call time, median", false, l, s.Percentile(0.5)/1e9)
			add("bobbin_rpc_call_p99_seconds", "IPC call time, 99th percentile", false, l, s.Percentile(0.99)/1e9)
			return
		}
	case len(parts) == 4 && parts[0] == "rm" && parts[1] == "queue":
		// rm.queue.<queue>.<measure>
		labels, parts = map[string]string{"queue": parts[2]}, []string{"rm", "queue", parts[3]}
	}
	prefix, last := strings.Join(parts[:len(parts)-1], "."), parts[len(parts)-1]
	base, scale := promName("bobbin_"+prefix, last)
	switch m := m.(type) {
	case metrics.Counter:
		add(base, "go-metrics counter "+name, true, labels, float64(m.Count())*scale)
	case metrics.Gauge:
		add(base, "go-metrics gauge "+name, false, labels, float64(m.Value())*scale)
	case metrics.GaugeFloat64:
		add(base, "go-metrics gauge "+name, false, labels, m.Value()*scale)
	case metrics.Meter:
		add(base+"_events", "go-metrics meter "+name+": events", true, labels, float64(m.Count()))
		add(base+"_rate1m", "go-metrics meter "+name+": one-minute rate per second", false, labels, m.Rate1())
	case metrics.Timer:
		s := m.Snapshot()
		add(base+"_calls", "go-metrics timer "+name+": calls timed", true, labels, float64(s.Count()))
		add(base+"_mean_seconds", "go-metrics timer "+name+": mean", false, labels, s.Mean()/1e9)
		add(base+"_p50_seconds", "go-metrics timer "+name+": median", false, labels, s.Percentile(0.5)/1e9)
		add(base+"_p99_seconds", "go-metrics timer "+name+": 99th percentile", false, labels, s.Percentile(0.99)/1e9)
	case metrics.Histogram:
		s := m.Snapshot()
		add(base+"_samples", "go-metrics histogram "+name+": samples", true, labels, float64(s.Count()))
		add(base+"_mean", "go-metrics histogram "+name+": mean", false, labels, s.Mean())
	}
}

// cumulative says a bean attribute only grows (Hadoop's MutableCounter): it is exported
// as a counter. Everything else is a gauge.
func cumulative(record, attr string) bool {
	switch {
	case strings.HasSuffix(attr, "NumOps"), strings.HasPrefix(attr, "Aggregate"),
		strings.HasPrefix(attr, "Sink_") && strings.HasSuffix(attr, "Dropped"),
		strings.HasPrefix(attr, "Rpc") && (strings.HasSuffix(attr, "Successes") || strings.HasSuffix(attr, "Failures")):
		return true
	}
	switch attr {
	case "ReceivedBytes", "SentBytes", "RpcClientBackoff", "RpcSlowCalls", "NumDroppedConnections", "DroppedPubAll",
		"AppsSubmitted", "AppsCompleted", "AppsKilled", "AppsFailed",
		"ShuffleOutputBytes", "ShuffleOutputsFailed", "ShuffleOutputsOK", "ShuffleConnections":
		return true
	case "ContainersLaunched", "ContainersCompleted", "ContainersFailed", "ContainersKilled":
		return record == "NodeManagerMetrics"
	}
	return false
}

type promFamily struct {
	help    string
	counter bool
	samples []promSample
}

type promSample struct {
	labels map[string]string
	value  float64
}

// emit sends the family's samples, each with every label any of them has (a label a
// sample lacks is empty: a family's label names are one set), once per label values.
func (f *promFamily) emit(ch chan<- prometheus.Metric, name string) {
	keys := map[string]bool{}
	for _, s := range f.samples {
		for k := range s.labels {
			keys[snake(k)] = true
		}
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	desc := prometheus.NewDesc(name, f.help, names, nil)
	typ := prometheus.GaugeValue
	if f.counter {
		typ = prometheus.CounterValue
	}
	seen := map[string]bool{}
	for _, s := range f.samples {
		named := make(map[string]string, len(s.labels))
		for k, v := range s.labels {
			named[snake(k)] = v
		}
		values := make([]string, len(names))
		for i, n := range names {
			values[i] = named[n]
		}
		key := strings.Join(values, "\x00")
		if seen[key] {
			continue
		}
		seen[key] = true
		m, err := prometheus.NewConstMetric(desc, typ, s.value, values...)
		if err != nil {
			ch <- prometheus.NewInvalidMetric(desc, err)
			continue
		}
		ch <- m
	}
}

// beanLabels splits a bean's object name: name=X is the record ("ClusterMetrics"), the
// domain and other properties (service=, q0=, user=) and the bean's string tags are labels.
func beanLabels(b Bean) (string, map[string]string) {
	domain, props, _ := strings.Cut(b.Name, ":")
	labels := map[string]string{}
	record := ""
	for _, kv := range strings.Split(props, ",") {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "name":
			record = v
		case "type":
			if record == "" {
				record = strings.ToLower(domain) + "_" + v
			}
		default:
			labels[k] = v
		}
	}
	for _, a := range b.Attrs {
		if s, ok := a.Value.(string); ok && strings.HasPrefix(a.Key, "tag.") {
			labels[strings.TrimPrefix(a.Key, "tag.")] = s
		}
	}
	// RpcActivityForPort8032: the record is RpcActivity, the port a label.
	if m := forPort.FindStringSubmatch(record); m != nil {
		record = m[1]
		labels["port"] = m[2]
	}
	return record, labels
}

var forPort = regexp.MustCompile(`^(.+)ForPort(\d+)$`)

// promName is the metric name of a bean attribute and the factor to its base unit.
func promName(record, attr string) (string, float64) {
	scale := 1.0
	switch {
	case strings.Contains(attr, "MBSeconds"):
		// AggregateMemoryMBSecondsPreempted: megabyte-seconds to byte-seconds.
		attr, scale = strings.Replace(attr, "MBSeconds", "ByteSeconds", 1), 1<<20
	case strings.HasSuffix(attr, "MB") || strings.HasSuffix(attr, "Mb"):
		attr, scale = attr[:len(attr)-2]+"Bytes", 1<<20
	case strings.HasSuffix(attr, "GB"):
		attr, scale = attr[:len(attr)-2]+"Bytes", 1<<30
	case strings.HasPrefix(attr, "Mem") && strings.HasSuffix(attr, "M"):
		attr, scale = attr[:len(attr)-1]+"Bytes", 1<<20
	case strings.HasSuffix(attr, "Millis"):
		attr, scale = attr[:len(attr)-6]+"Seconds", 1e-3
	case strings.HasSuffix(attr, "AvgTime") || strings.HasSuffix(attr, "Uptime"):
		attr, scale = attr+"Seconds", 1e-3
	case attr == "StartTime":
		attr, scale = "StartTimeSeconds", 1e-3
	case strings.HasSuffix(attr, "Count"):
		// Prometheus keeps _count for histograms: GcCount is gcs, ThreadCount threads.
		attr = attr[:len(attr)-5] + "s"
	}
	return snake(record) + "_" + snake(attr), scale
}

// snake turns CamelCase and dotted names into snake_case: NumActiveNMs → num_active_nms.
func snake(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case unicode.IsUpper(r):
			// A word starts at an upper case letter after a lower case one or a digit, or at
			// the last capital of an acronym followed by a lower case word (RPCQueue);
			// an acronym's plural s stays with it (NMs).
			pluralAcronym := i+1 < len(rs) && rs[i+1] == 's' && (i+2 == len(rs) || !unicode.IsLower(rs[i+2]))
			if i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]) ||
				i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1]) && !pluralAcronym) {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := strings.Trim(b.String(), "_")
	for strings.Contains(out, "__") {
		out = strings.ReplaceAll(out, "__", "_")
	}
	return out
}

// number reads a bean attribute's numeric value (bools as 0/1).
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case float32:
		return float64(x), true
	case float64:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}
