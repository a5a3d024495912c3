package rmweb

import (
	"net/http"
	"net/http/pprof"
	"runtime"
	"time"

	"github.com/bobbin-yarn/bobbin/resourcemanager/rmcore"
	"github.com/bobbin-yarn/bobbin/yarn/webapp"
)

// Options are what the web layer knows beyond the core.
type Options struct {
	HA bool // the RM runs with HA (this core is the active one)
	// Proxy serves /proxy/ (the web proxy), nil when it runs apart (yarn.web-proxy.address).
	Proxy http.Handler
}

// Handler serves the RM's HTTP endpoints on yarn.resourcemanager.webapp.address: the
// REST API under /ws/v1/cluster in the Java RM's shapes (JSON, or XML on request), and
// every go-metrics value at /metrics.
func Handler(rm *rmcore.Core, opts Options) http.Handler {
	mux := http.NewServeMux()
	s := &rest{rm: rm, opts: opts}
	for _, p := range []string{"/ws/v1/cluster", "/ws/v1/cluster/{$}", "/ws/v1/cluster/info"} {
		mux.HandleFunc("GET "+p, s.clusterInfo)
	}
	mux.HandleFunc("GET /ws/v1/cluster/metrics", s.clusterMetrics)
	mux.HandleFunc("GET /ws/v1/cluster/apps", s.apps)
	mux.HandleFunc("GET /ws/v1/cluster/apps/{id}", s.app)
	mux.HandleFunc("GET /ws/v1/cluster/apps/{id}/appattempts", s.appAttempts)
	mux.HandleFunc("GET /ws/v1/cluster/apps/{id}/state", s.appStateGet)
	mux.HandleFunc("PUT /ws/v1/cluster/apps/{id}/state", s.appStatePut)
	mux.HandleFunc("GET /ws/v1/cluster/scheduler", s.scheduler)
	mux.HandleFunc("POST /ws/v1/cluster/apps/new-application", s.newApplication)
	mux.HandleFunc("POST /ws/v1/cluster/apps", s.submit)
	mux.HandleFunc("GET /ws/v1/cluster/apps/{id}/queue", s.appQueueGet)
	mux.HandleFunc("PUT /ws/v1/cluster/apps/{id}/queue", s.appQueuePut)
	mux.HandleFunc("GET /ws/v1/cluster/apps/{id}/priority", s.appPriorityGet)
	mux.HandleFunc("PUT /ws/v1/cluster/apps/{id}/priority", s.appPriorityPut)
	mux.HandleFunc("GET /ws/v1/cluster/appstatistics", s.appStatistics)
	mux.HandleFunc("GET /ws/v1/cluster/nodes", s.nodes)
	mux.HandleFunc("GET /ws/v1/cluster/nodes/{id}", s.node)
	s.labelRoutes(mux)
	// Anything else under /ws is Jersey's 404, as RemoteException JSON.
	mux.HandleFunc("/ws/", func(w http.ResponseWriter, r *http.Request) {
		webapp.WriteError(w, r, &webapp.Error{Class: webapp.ClassNotFound, Msg: "java.lang.Exception: no resource at " + r.URL.Path})
	})
	if u, err := newUI(s); err == nil {
		u.routes(mux)
	} else {
		// The templates are compiled into the binary: this is a build defect.
		panic("rmweb: " + err.Error())
	}
	if opts.Proxy != nil {
		mux.Handle("/proxy/", opts.Proxy)
	}
	if rm.Settings().Pprof {
		// Registered on this mux, not http.DefaultServeMux, so only an RM that asks for
		// the profiler serves it.
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		// Lock contention and blocking show up only if sampled (a fraction of events,
		// cheap enough to leave on in an RM being profiled).
		runtime.SetMutexProfileFraction(20)
		runtime.SetBlockProfileRate(int(100 * time.Microsecond))
	}
	return mux
}
