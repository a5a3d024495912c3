package rmweb

import (
	"encoding/json"
	"net/http"
	"net/http/pprof"
	"runtime"
	"time"

	metrics "github.com/rcrowley/go-metrics"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmcore"
	"github.com/bobbin-yarn/bobbin/resourcemanager/statestore"
)

// Handler serves the RM's HTTP endpoints on yarn.resourcemanager.webapp.address: the
// REST resources scripts poll most (/ws/v1/cluster/info and /ws/v1/cluster/metrics, in
// the Java RM's JSON shape) and every go-metrics value at /metrics.
func Handler(rm *rmcore.Core) http.Handler {
	mux := http.NewServeMux()
	writeJSON := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("GET /ws/v1/cluster/info", func(w http.ResponseWriter, r *http.Request) {
		info := map[string]any{
			"id": rm.ClusterTimestamp(), "startedOn": rm.ClusterTimestamp(), "state": "STARTED", "haState": "ACTIVE",
			"resourceManagerVersion": rmcore.Version, "hadoopVersion": rmcore.Version,
			"rmStateStoreName": statestore.ClassName(rm.Opts.Conf),
		}
		if rm.Store != nil {
			info["rmStateStoreLocation"] = rm.Store.Location() // Bobbin's addition: where the state is
		}
		writeJSON(w, map[string]any{"clusterInfo": info})
	})
	mux.HandleFunc("GET /ws/v1/cluster/metrics", func(w http.ResponseWriter, r *http.Request) {
		c := rm.Nodes.Counts()
		total, used := rm.Engine.Totals()
		m := rm.Metrics
		writeJSON(w, map[string]any{"clusterMetrics": map[string]any{
			"appsSubmitted": m.AppsSubmitted.Count(), "appsCompleted": m.AppsCompleted.Count(), "appsFailed": m.AppsFailed.Count(),
			"appsKilled": m.AppsKilled.Count(), "containersAllocated": m.RunningContainers.Value(),
			"totalMB": total[0], "allocatedMB": used[0], "availableMB": total[0] - used[0],
			"totalVirtualCores": total[1], "allocatedVirtualCores": used[1], "availableVirtualCores": total[1] - used[1],
			"activeNodes": c[yarnpb.NodeStateProto_NS_RUNNING], "lostNodes": c[yarnpb.NodeStateProto_NS_LOST],
			"unhealthyNodes": c[yarnpb.NodeStateProto_NS_UNHEALTHY], "decommissionedNodes": c[yarnpb.NodeStateProto_NS_DECOMMISSIONED],
			"rebootedNodes": c[yarnpb.NodeStateProto_NS_REBOOTED], "totalNodes": len(rm.Nodes.Reports(nil, rm.Labels)),
		}})
	})
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		metrics.WriteJSONOnce(rm.Opts.Metrics, w)
	})
	if rm.Settings.Pprof {
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
