package nodemanager

import (
	"net/http"
	"os"

	metrics "github.com/rcrowley/go-metrics"

	"github.com/bobbin-yarn/bobbin/yarn/spnego"
	"github.com/bobbin-yarn/bobbin/yarn/webapp"
)

// webHandler serves the NodeManager's HTTP address: the REST API under /ws/v1/node, the
// web pages under /node (container logs at /node/containerlogs/<container>/<user>, the
// links MR and the RM print), the borrowed-mode measurements over time at
// /ws/v1/node/borrowed, /jmx, /conf, /logLevel, /stacks, /prom, and every go-metrics value
// at /metrics.
func (nm *NodeManager) webHandler() http.Handler {
	mux := http.NewServeMux()
	nm.restRoutes(mux)
	host, _ := os.Hostname()
	d := &webapp.Daemon{Service: "NodeManager", Host: host, Conf: nm.opts.Conf, Log: nm.opts.Logger.Logger, Metrics: nm.opts.Metrics,
		Started: nm.opts.Now(), Beans: nm.beans, Web: nm.webUsers, Redact: nm.redact}
	d.Install(mux)
	mux.HandleFunc("GET /ws/v1/node/borrowed", nm.serveBorrowed)
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		metrics.WriteJSONOnce(nm.opts.Metrics, w)
	})
	nm.uiRoutes(mux)
	return mux
}

// servedWeb is what the web port serves: the pages and REST API, each request's caller
// decided first (yarn/webuser), behind SPNEGO with hadoop.http.authentication.type=kerberos
// (yarn.nodemanager.webapp.spnego-principal and spnego-keytab-file, else
// hadoop.http.authentication.kerberos.*).
func (nm *NodeManager) servedWeb(h http.Handler) (http.Handler, error) {
	return spnego.Wrap(nm.webUsers.Wrap(webapp.AnswerOptions(h)), nm.opts.Conf, "yarn.nodemanager.webapp.spnego-principal", "yarn.nodemanager.webapp.spnego-keytab-file",
		nm.settings.WebAddr, nm.log)
}
