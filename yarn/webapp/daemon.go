package webapp

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html"
	"math"
	"net/http"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metrics "github.com/rcrowley/go-metrics"
	"github.com/sirupsen/logrus"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/yarn/webuser"
)

// Daemon serves what every Hadoop daemon's web server has beside its own pages: /jmx,
// /conf, /logLevel, /stacks, and Bobbin's /prom (Prometheus text).
type Daemon struct {
	Service string // "ResourceManager", "NodeManager": the service= of the bean names
	Host    string
	Conf    *conf.Configuration
	Log     *logrus.Logger
	Metrics metrics.Registry
	Started time.Time
	// Beans are the daemon's own beans (ClusterMetrics, QueueMetrics, ...), computed
	// per request.
	Beans func() []Bean
	// Web decides the callers of the administrator and instrumentation pages (nil:
	// everybody may use them, as on a cluster without hadoop.security.authorization).
	Web *webuser.Policy
	// Redact masks /conf's sensitive values (nil: Hadoop's default list).
	Redact *Redactor

	logs       logCounts
	levelsOnce sync.Once
	levels     *Levels
	promOnce   sync.Once
	prom       http.Handler
	// snapshots time the beans' computations (each /jmx and /prom request), publishes
	// the /prom scrapes: MetricsSystem's Snapshot and Publish (metricssystem.go).
	timersOnce           sync.Once
	snapshots, publishes metrics.Timer
}

// Install registers the pages on mux and counts the daemon's log lines for JvmMetrics.
func (d *Daemon) Install(mux *http.ServeMux) {
	// The process-wide standard logger may serve several daemons (tests): its lines are
	// not counted rather than counted for all of them.
	if d.Log != nil && d.Log != logrus.StandardLogger() {
		d.logs.levels = d.levelsOf()
		d.Log.AddHook(&d.logs)
	}
	instr := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if d.Web == nil || d.Web.InstrumentationAccess(w, r) {
				h(w, r)
			}
		}
	}
	mux.HandleFunc("GET /jmx", instr(func(w http.ResponseWriter, r *http.Request) { serveJMX(w, r, d.AllBeans()) }))
	mux.HandleFunc("GET /conf", instr(d.serveConf))
	mux.HandleFunc("GET /logLevel", func(w http.ResponseWriter, r *http.Request) {
		if d.Web == nil || d.Web.AdminAccess(w, r) {
			d.serveLogLevel(w, r)
		}
	})
	mux.HandleFunc("GET /stacks", instr(serveStacks))
	mux.HandleFunc("GET /logs/", func(w http.ResponseWriter, r *http.Request) {
		if d.Web == nil || d.Web.AdminAccess(w, r) {
			d.serveLogs(w, r)
		}
	})
	mux.HandleFunc("GET /prom", instr(d.serveProm))
	// Where scrapers look by default; ?format=json is the go-metrics registry as JSON
	// (what /metrics was before).
	mux.HandleFunc("GET /metrics", instr(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("format") == "json" {
			w.Header().Set("Content-Type", "application/json")
			if d.Metrics != nil {
				metrics.WriteJSONOnce(d.Metrics, w)
			}
			return
		}
		d.serveProm(w, r)
	}))
}

// AllBeans are the daemon's beans, the runtime's, UgiMetrics and the metrics system's,
// sorted by name.
func (d *Daemon) AllBeans() []Bean {
	start := time.Now()
	var out []Bean
	if d.Beans != nil {
		out = append(out, d.Beans()...)
	}
	out = append(out, RuntimeBeans(d.Service, d.Host, d.Started, d.logs.counts)...)
	out = append(out, d.ugiBean())
	out = append(out, d.metricsSystemBeans(out)...)
	SortBeans(out)
	d.timers()
	d.snapshots.UpdateSince(start)
	return out
}

// logCounts counts log lines by level (JvmMetrics' LogFatal, LogError, LogWarn, LogInfo):
// the lines written, not those a logger's level drops.
type logCounts struct {
	fatal, errs, warn, info atomic.Int64
	levels                  *Levels
}

func (l *logCounts) Levels() []logrus.Level { return logrus.AllLevels }

func (l *logCounts) Fire(e *logrus.Entry) error {
	if l.levels != nil && !l.levels.Enabled(e) {
		return nil
	}
	switch e.Level {
	case logrus.PanicLevel, logrus.FatalLevel:
		l.fatal.Add(1)
	case logrus.ErrorLevel:
		l.errs.Add(1)
	case logrus.WarnLevel:
		l.warn.Add(1)
	case logrus.InfoLevel:
		l.info.Add(1)
	}
	return nil
}

func (l *logCounts) counts() (int64, int64, int64, int64) {
	return l.fatal.Load(), l.errs.Load(), l.warn.Load(), l.info.Load()
}

type confProperty struct {
	Key      string `json:"key" xml:"name"`
	Value    string `json:"value" xml:"value"`
	IsFinal  bool   `json:"isFinal" xml:"final"`
	Resource string `json:"resource" xml:"source"`
}

// serveConf answers /conf as Hadoop's ConfServlet: the effective configuration as XML
// (<configuration><property>...), or JSON with ?format=json; ?name=<key> shows one key.
func (d *Daemon) serveConf(w http.ResponseWriter, r *http.Request) {
	var props []confProperty
	keys := d.Conf.Keys()
	if name := r.URL.Query().Get("name"); name != "" {
		if _, ok := d.Conf.Raw(name); !ok {
			http.Error(w, "Property "+name+" not found", http.StatusNotFound)
			return
		}
		keys = []string{name}
	}
	for _, k := range keys {
		v, _, err := d.Conf.Lookup(k)
		if err != nil {
			v, _ = d.Conf.Raw(k)
		}
		v = d.redactor().Redact(k, v)
		props = append(props, confProperty{Key: k, Value: v, Resource: d.Conf.Source(k)})
	}
	switch f := r.URL.Query().Get("format"); f {
	case "json":
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		json.NewEncoder(w).Encode(map[string]any{"properties": props})
	case "", "xml":
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		out := struct {
			XMLName xml.Name       `xml:"configuration"`
			Props   []confProperty `xml:"property"`
		}{Props: props}
		w.Write([]byte(xml.Header))
		enc := xml.NewEncoder(w)
		enc.Encode(out)
	default:
		http.Error(w, "Bad format: "+f, http.StatusBadRequest)
	}
}

// logDir is the directory the daemon's log files are in: its logger writes to a
// rolling file (bobbin's --log-dir, YARN_LOG_DIR), else "".
func (d *Daemon) logDir() string {
	if d.Log == nil {
		return ""
	}
	if o, ok := d.Log.Out.(interface{ LogDir() string }); ok {
		return o.LogDir()
	}
	return ""
}

// serveLogs answers /logs/ as the Java daemons' HttpServer2 does (administrators only):
// the log directory's listing and its files; a daemon logging to standard error says so.
func (d *Daemon) serveLogs(w http.ResponseWriter, r *http.Request) {
	dir := d.logDir()
	if dir == "" {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!DOCTYPE html>\n<html><head><title>Logs</title></head><body><h1>Logs</h1>\n"+
			"<p>This daemon writes its log to its standard error, not to files: start it with --log-dir, "+
			"or with YARN_LOG_DIR and YARN_ROOT_LOGGER=INFO,RFA as <code>yarn --daemon start</code> sets them.</p></body></html>\n")
		return
	}
	http.StripPrefix("/logs/", http.FileServer(http.Dir(dir))).ServeHTTP(w, r)
}

// logMarker starts every line of /logLevel's answer that Hadoop's LogLevel client
// (`yarn daemonlog`) prints: it prints those lines, tags stripped, and nothing else.
const logMarker = "<!-- OUTPUT -->"

// loggerRoots are the Java packages of the daemons' loggers.
var loggerRoots = map[string]string{
	"ResourceManager":   "org.apache.hadoop.yarn.server.resourcemanager",
	"NodeManager":       "org.apache.hadoop.yarn.server.nodemanager",
	"WebAppProxyServer": "org.apache.hadoop.yarn.server.webproxy",
}

// levels are the daemon's per-logger levels (nil without a logger).
func (d *Daemon) levelsOf() *Levels {
	d.levelsOnce.Do(func() {
		if d.Log != nil {
			root := loggerRoots[d.Service]
			if root == "" {
				root = "org.apache.hadoop"
			}
			d.levels = NewLevels(d.Log, root)
		}
	})
	return d.levels
}

// serveLogLevel answers /logLevel as Hadoop's LogLevel servlet: ?log=<name> shows a
// logger's effective level, &level=<LEVEL> sets that logger's (and so of those under
// it), each answer line behind the marker `yarn daemonlog` looks for.
func (d *Daemon) serveLogLevel(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	q := r.URL.Query()
	name, level := q.Get("log"), q.Get("level")
	fmt.Fprint(w, "<!DOCTYPE html>\n<html><head><title>Log Level</title></head><body><h1>Log Level</h1>\n")
	defer func() {
		if lv := d.levelsOf(); lv != nil {
			if named := lv.Named(); len(named) > 0 {
				fmt.Fprintf(w, "<p>Levels set by name: %s</p>\n", html.EscapeString(strings.Join(named, ", ")))
			}
		}
		fmt.Fprint(w, `<hr><form>Log: <input type="text" size="50" name="log"> Level: <input type="text" name="level"> <input type="submit" value="Get / Set Log Level"></form></body></html>`+"\n")
	}()
	levels := d.levelsOf()
	if name == "" || levels == nil {
		return
	}
	fmt.Fprintf(w, "%sSubmitted Log Name: <b>%s</b><br />\n", logMarker, html.EscapeString(name))
	fmt.Fprintf(w, "%sLog Class: <b>org.apache.log4j.Logger</b><br />\n", logMarker)
	if level != "" {
		fmt.Fprintf(w, "%sSubmitted Level: <b>%s</b><br />\n", logMarker, html.EscapeString(level))
		lv, err := parseLevel(level)
		if err != nil {
			// log4j's Level.toLevel falls back to DEBUG; the servlet says the name is bad.
			fmt.Fprintf(w, "%sBad Level : <b>%s</b><br />\n", logMarker, html.EscapeString(level))
		} else {
			levels.Set(name, lv)
			d.Log.WithFields(logrus.Fields{"log": name, "level": level}).Warn("log level set over the web")
			fmt.Fprintf(w, "%sSetting Level to %s ...<br />\n", logMarker, html.EscapeString(level))
		}
	}
	fmt.Fprintf(w, "%sEffective Level: <b>%s</b><br />\n", logMarker, javaLevel(levels.Effective(name)))
}

// parseLevel takes log4j's level names and logrus's.
func parseLevel(s string) (logrus.Level, error) {
	switch s {
	case "ALL", "TRACE", "trace":
		return logrus.TraceLevel, nil
	case "DEBUG":
		return logrus.DebugLevel, nil
	case "INFO":
		return logrus.InfoLevel, nil
	case "WARN":
		return logrus.WarnLevel, nil
	case "ERROR":
		return logrus.ErrorLevel, nil
	case "FATAL":
		return logrus.FatalLevel, nil
	case "OFF":
		return logrus.PanicLevel, nil
	}
	return logrus.ParseLevel(strings.ToLower(s))
}

func javaLevel(l logrus.Level) string {
	switch l {
	case logrus.TraceLevel:
		return "TRACE"
	case logrus.DebugLevel:
		return "DEBUG"
	case logrus.InfoLevel:
		return "INFO"
	case logrus.WarnLevel:
		return "WARN"
	case logrus.ErrorLevel:
		return "ERROR"
	case logrus.PanicLevel:
		return "OFF" // what OFF sets: nothing but a panic is written
	}
	return "FATAL"
}

// serveStacks answers /stacks: every goroutine's stack (the Java daemons' thread dump).
func serveStacks(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= 64<<20 {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	fmt.Fprintf(w, "Process Thread Dump: %d goroutines\n", runtime.NumGoroutine())
	w.Write(buf)
}

// memoryLimit is the Go runtime's soft memory limit (GOMEMLIMIT), or -1 when there is none.
func memoryLimit() int64 {
	l := debug.SetMemoryLimit(-1)
	if l == math.MaxInt64 {
		return -1
	}
	return l
}

// NewHTTPServer is a daemon's web server with the limits both daemons' web ports share:
// a client gets 10 s to send its request's headers and 30 s for the whole request, an
// answer 2 minutes, and a keep-alive connection is closed after 2 idle minutes, so slow
// or idle clients are dropped rather than kept.
func NewHTTPServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 2 * time.Minute,
		IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
}

// AnswerOptions answers OPTIONS on every path as the Java daemons' Jetty does (200 with
// the methods allowed), and hands every other request to next. Hadoop's client
// authenticator (KerberosAuthenticator, PseudoAuthenticator: `yarn top`, the timeline
// and log clients) opens each endpoint with OPTIONS first and fails on anything but 200
// or a SPNEGO 401.
func AnswerOptions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodOptions {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Allow", "GET, HEAD, POST, PUT, DELETE, OPTIONS")
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
	})
}
