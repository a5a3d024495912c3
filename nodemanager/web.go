package nodemanager

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"

	metrics "github.com/rcrowley/go-metrics"

	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/yarn/webapp"
)

// webHandler serves the NodeManager's HTTP address: container logs at
// /node/containerlogs/<container>/<user>[/<file>] (the links MR and the yarn CLI print)
// a liveness answer at /ws/v1/node/info, the borrowed-mode measurements over time at
// /ws/v1/node/borrowed and every go-metrics value at /metrics.
func (nm *NodeManager) webHandler() http.Handler {
	mux := http.NewServeMux()
	nm.restRoutes(mux)
	host, _ := os.Hostname()
	d := &webapp.Daemon{Service: "NodeManager", Host: host, Conf: nm.opts.Conf, Log: nm.opts.Logger.Logger, Metrics: nm.opts.Metrics,
		Started: nm.opts.Now(), Beans: nm.beans}
	d.Install(mux)
	mux.HandleFunc("GET /ws/v1/node/borrowed", nm.serveBorrowed)
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		metrics.WriteJSONOnce(nm.opts.Metrics, w)
	})
	mux.HandleFunc("GET /node/containerlogs/", func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/node/containerlogs/"), "/")
		cid, err := records.ParseContainerID(parts[0])
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, l := range nm.settings.LogDirs {
			dir := filepath.Join(l, cid.Attempt.App.String(), cid.String())
			if len(parts) >= 3 && parts[2] != "" {
				name := filepath.Base(parts[2])
				http.ServeFile(w, r, filepath.Join(dir, name))
				return
			}
			if entries, err := os.ReadDir(dir); err == nil {
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				for _, e := range entries {
					w.Write([]byte(e.Name() + "\n"))
				}
				return
			}
		}
		http.NotFound(w, r)
	})
	return mux
}
