package webapp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/bobbin-yarn/bobbin/rpc"
)

// Bean is one MBean as Hadoop's /jmx (JMXJsonServlet) writes it: its object name, its
// modelerType, then its attributes in order.
type Bean struct {
	Name        string
	ModelerType string
	Attrs       []Attr
}

// Attr is one attribute of a bean. Value is a number, string, bool or a nested map.
type Attr struct {
	Key   string
	Value any
}

// MarshalJSON writes the bean with name and modelerType first, then the attributes in
// their order (JMX clients read by name, people read top to bottom).
func (b Bean) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	write := func(k string, v any) error {
		if buf.Len() > 1 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		vb, err := json.Marshal(v)
		if err != nil {
			return err
		}
		buf.Write(vb)
		return nil
	}
	if err := write("name", b.Name); err != nil {
		return nil, err
	}
	if err := write("modelerType", b.ModelerType); err != nil {
		return nil, err
	}
	for _, a := range b.Attrs {
		if err := write(a.Key, a.Value); err != nil {
			return nil, err
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// Attr returns the value of attribute key, if the bean has it.
func (b Bean) Attr(key string) (any, bool) {
	for _, a := range b.Attrs {
		if a.Key == key {
			return a.Value, true
		}
	}
	return nil, false
}

// serveJMX answers /jmx as Hadoop's JMXJsonServlet: {"beans":[...]}; ?qry=<object name
// pattern> (JMX patterns: * and ? in the domain and in property values, a trailing ",*"
// for any further properties) selects beans, ?get=<bean>::<attribute> one attribute.
func serveJMX(w http.ResponseWriter, r *http.Request, beans []Bean) {
	w.Header().Set("Content-Type", "application/json; charset=utf8")
	w.Header().Set("Access-Control-Allow-Methods", "GET")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	q := r.URL.Query()
	if get := q.Get("get"); get != "" {
		name, attr, ok := strings.Cut(get, "::")
		if !ok {
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]any{"result": "ERROR", "message": "query format is not as expected."})
			return
		}
		for _, b := range beans {
			if b.Name == name {
				if v, ok := b.Attr(attr); ok {
					enc := json.NewEncoder(w)
					enc.SetIndent("", "  ")
					enc.Encode(map[string]any{"beans": []Bean{{Name: b.Name, ModelerType: b.ModelerType, Attrs: []Attr{{attr, v}}}}})
					return
				}
			}
		}
		w.WriteHeader(http.StatusNotFound)
		json.NewEncoder(w).Encode(map[string]any{"result": "ERROR", "message": "No such attribute " + get})
		return
	}
	out := beans
	if qry := q.Get("qry"); qry != "" {
		out = nil
		for _, b := range beans {
			if objectNameMatches(qry, b.Name) {
				out = append(out, b)
			}
		}
	}
	if out == nil {
		out = []Bean{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(map[string]any{"beans": out})
}

// objectNameMatches matches a JMX object name against a pattern: the domains with glob
// wildcards, and each key=value of the pattern present in the name (values may have
// wildcards); without a trailing ",*" the name has no other keys.
func objectNameMatches(pattern, name string) bool {
	pd, pp, _ := strings.Cut(pattern, ":")
	nd, np, _ := strings.Cut(name, ":")
	if ok, _ := path.Match(pd, nd); !ok {
		return false
	}
	props := map[string]string{}
	for _, kv := range strings.Split(np, ",") {
		k, v, _ := strings.Cut(kv, "=")
		props[k] = v
	}
	open := false
	want := 0
	for _, kv := range strings.Split(pp, ",") {
		if kv == "*" {
			open = true
			continue
		}
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		got, ok := props[k]
		if !ok {
			return false
		}
		if m, _ := path.Match(v, got); !m {
			return false
		}
		want++
	}
	return open || want == len(props)
}

// RuntimeBeans are the process's beans in the JVM's names, filled from the Go runtime, so
// dashboards that read a Java daemon's memory, threads, GC and uptime read Bobbin's:
// Hadoop's JvmMetrics and java.lang's Runtime, Memory and Threading.
func RuntimeBeans(service, host string, started time.Time, logCounts func() (fatal, errs, warn, info int64)) []Bean {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	const mb = 1 << 20
	goroutines := int64(runtime.NumGoroutine())
	var fatal, errs, warn, info int64
	if logCounts != nil {
		fatal, errs, warn, info = logCounts()
	}
	heapMax := int64(-1) // Go has no fixed heap ceiling unless GOMEMLIMIT says so
	if lim := memoryLimit(); lim > 0 {
		heapMax = lim
	}
	nonHeap := int64(ms.StackSys + ms.MSpanSys + ms.MCacheSys + ms.BuckHashSys + ms.GCSys + ms.OtherSys)
	return []Bean{
		{Name: "Hadoop:service=" + service + ",name=JvmMetrics", ModelerType: "JvmMetrics", Attrs: []Attr{
			{"tag.Context", "jvm"}, {"tag.ProcessName", service}, {"tag.SessionId", nil}, {"tag.Hostname", host},
			{"MemNonHeapUsedM", float64(nonHeap) / mb}, {"MemNonHeapCommittedM", float64(nonHeap) / mb}, {"MemNonHeapMaxM", -1.0},
			{"MemHeapUsedM", float64(ms.HeapAlloc) / mb}, {"MemHeapCommittedM", float64(ms.HeapSys) / mb},
			{"MemHeapMaxM", maxM(heapMax)}, {"MemMaxM", maxM(heapMax)},
			{"GcCount", int64(ms.NumGC)}, {"GcTimeMillis", int64(ms.PauseTotalNs / 1e6)},
			// Goroutines stand for threads: the Go scheduler does not say which wait.
			{"ThreadsNew", 0}, {"ThreadsRunnable", goroutines}, {"ThreadsBlocked", 0}, {"ThreadsWaiting", 0},
			{"ThreadsTimedWaiting", 0}, {"ThreadsTerminated", 0},
			{"LogFatal", fatal}, {"LogError", errs}, {"LogWarn", warn}, {"LogInfo", info},
		}},
		{Name: "java.lang:type=Runtime", ModelerType: "sun.management.RuntimeImpl", Attrs: []Attr{
			{"Name", "bobbin " + service}, {"VmName", "Go " + runtime.Version()}, {"VmVendor", "Bobbin"},
			{"StartTime", started.UnixMilli()}, {"Uptime", time.Since(started).Milliseconds()},
		}},
		{Name: "java.lang:type=Memory", ModelerType: "sun.management.MemoryImpl", Attrs: []Attr{
			{"HeapMemoryUsage", map[string]int64{"committed": int64(ms.HeapSys), "init": 0, "max": heapMax, "used": int64(ms.HeapAlloc)}},
			{"NonHeapMemoryUsage", map[string]int64{"committed": nonHeap, "init": 0, "max": -1, "used": nonHeap}},
			{"ObjectPendingFinalizationCount", 0}, {"Verbose", false},
		}},
		{Name: "java.lang:type=Threading", ModelerType: "sun.management.ThreadImpl", Attrs: []Attr{
			{"ThreadCount", goroutines}, {"DaemonThreadCount", goroutines},
		}},
	}
}

func maxM(b int64) float64 {
	if b < 0 {
		return -1
	}
	return float64(b) / (1 << 20)
}

// SortBeans orders beans by name, as the MBean server lists them.
func SortBeans(b []Bean) {
	sort.Slice(b, func(i, j int) bool { return b[i].Name < b[j].Name })
}

// RPCActivityBean is Hadoop's RpcActivityForPort<port> bean of a daemon's IPC server.
func RPCActivityBean(service, host string, port int, a rpc.Activity) Bean {
	p := strconv.Itoa(port)
	return Bean{Name: "Hadoop:service=" + service + ",name=RpcActivityForPort" + p, ModelerType: "RpcActivityForPort" + p, Attrs: []Attr{
		{"tag.port", p}, {"tag.Context", "rpc"}, {"tag.Hostname", host},
		{"ReceivedBytes", a.ReceivedBytes}, {"SentBytes", a.SentBytes},
		{"RpcQueueTimeNumOps", a.QueueTimeNumOps}, {"RpcQueueTimeAvgTime", a.QueueTimeAvgMillis},
		{"RpcProcessingTimeNumOps", a.ProcessingTimeNumOps}, {"RpcProcessingTimeAvgTime", a.ProcessingTimeAvgMillis},
		{"RpcAuthenticationFailures", a.AuthenticationFailures}, {"RpcAuthenticationSuccesses", a.AuthenticationSuccesses},
		{"RpcAuthorizationFailures", a.AuthorizationFailures}, {"RpcAuthorizationSuccesses", a.AuthorizationSuccesses},
		{"NumOpenConnections", a.OpenConnections}, {"CallQueueLength", a.CallQueueLength},
	}}
}
