package webapp

import (
	"fmt"
	"math"
	"net/http"
	"sort"
	"strings"
	"unicode"

	metrics "github.com/rcrowley/go-metrics"
)

// serveProm answers /prom in Prometheus' text exposition format (version 0.0.4): every
// numeric attribute of every bean, as a gauge named after the bean's name= and the
// attribute (QueueMetrics' AppsRunning: queue_metrics_apps_running) with the bean's other
// name properties and tags as labels; then the daemon's go-metrics (bobbin_*). Units are
// turned into Prometheus' base units (MB and GB into bytes, milliseconds into seconds), so
// promtool's lint passes.
func (d *Daemon) serveProm(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	fams := map[string]*promFamily{}
	add := func(name, help string, labels map[string]string, v float64) {
		f := fams[name]
		if f == nil {
			f = &promFamily{help: help}
			fams[name] = f
		}
		f.samples = append(f.samples, promSample{labels: promLabels(labels), value: v})
	}
	for _, b := range d.AllBeans() {
		record, labels := beanLabels(b)
		if record == "" {
			continue
		}
		for _, a := range b.Attrs {
			v, ok := number(a.Value)
			if !ok || strings.HasPrefix(a.Key, "tag.") {
				continue
			}
			name, scale := promName(record, a.Key)
			add(name, fmt.Sprintf("%s of %s", a.Key, b.Name), labels, v*scale)
		}
	}
	if d.Metrics != nil {
		d.Metrics.Each(func(name string, m any) {
			// The last part of a go-metrics name is the measure, in Hadoop's unit words.
			prefix, last := "", name
			if i := strings.LastIndexByte(name, '.'); i >= 0 {
				prefix, last = name[:i], name[i+1:]
			}
			base, scale := promName("bobbin_"+prefix, last)
			switch m := m.(type) {
			case metrics.Counter:
				add(base, "go-metrics counter "+name, nil, float64(m.Count())*scale)
			case metrics.Gauge:
				add(base, "go-metrics gauge "+name, nil, float64(m.Value())*scale)
			case metrics.GaugeFloat64:
				add(base, "go-metrics gauge "+name, nil, m.Value()*scale)
			case metrics.Meter:
				add(base+"_events", "go-metrics meter "+name+": events", nil, float64(m.Count()))
				add(base+"_rate1m", "go-metrics meter "+name+": one-minute rate per second", nil, m.Rate1())
			case metrics.Timer:
				s := m.Snapshot()
				if parts := strings.Split(name, "."); len(parts) == 4 && parts[0] == "rpc" {
					// rpc.<server>.<protocol>.<method>: one family, the call in labels.
					l := map[string]string{"server": parts[1], "protocol": strings.TrimSuffix(parts[2], "PB"), "method": parts[3]}
					add("bobbin_rpc_calls", "IPC calls answered", l, float64(s.Count()))
					add("bobbin_rpc_call_mean_seconds", "IPC call time, mean", l, s.Mean()/1e9)
					add("bobbin_rpc_call_p50_seconds", "IPC call time, median", l, s.Percentile(0.5)/1e9)
					add("bobbin_rpc_call_p99_seconds", "IPC call time, 99th percentile", l, s.Percentile(0.99)/1e9)
					return
				}
				add(base+"_calls", "go-metrics timer "+name+": calls timed", nil, float64(s.Count()))
				add(base+"_mean_seconds", "go-metrics timer "+name+": mean", nil, s.Mean()/1e9)
				add(base+"_p50_seconds", "go-metrics timer "+name+": median", nil, s.Percentile(0.5)/1e9)
				add(base+"_p99_seconds", "go-metrics timer "+name+": 99th percentile", nil, s.Percentile(0.99)/1e9)
			case metrics.Histogram:
				s := m.Snapshot()
				add(base+"_samples", "go-metrics histogram "+name+": samples", nil, float64(s.Count()))
				add(base+"_mean", "go-metrics histogram "+name+": mean", nil, s.Mean())
			}
		})
	}
	names := make([]string, 0, len(fams))
	for n := range fams {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		f := fams[n]
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s gauge\n", n, escapeHelp(f.help), n)
		seen := map[string]bool{}
		for _, s := range f.samples {
			if seen[s.labels] { // one sample per label set
				continue
			}
			seen[s.labels] = true
			fmt.Fprintf(&b, "%s%s %s\n", n, s.labels, promValue(s.value))
		}
	}
	w.Write([]byte(b.String()))
}

type promFamily struct {
	help    string
	samples []promSample
}

type promSample struct {
	labels string
	value  float64
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
	return record, labels
}

// promName is the metric name of a bean attribute and the factor to its base unit.
func promName(record, attr string) (string, float64) {
	scale := 1.0
	switch {
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

func promLabels(l map[string]string) string {
	if len(l) == 0 {
		return ""
	}
	named := make(map[string]string, len(l))
	keys := make([]string, 0, len(l))
	for k, v := range l {
		named[snake(k)] = v
		keys = append(keys, snake(k))
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		v := strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`).Replace(named[k])
		parts = append(parts, fmt.Sprintf(`%s="%s"`, k, v))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func escapeHelp(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(s)
}

func promValue(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return fmt.Sprint(v)
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
