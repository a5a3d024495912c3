package rmweb

import (
	"embed"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/yarn/webui"
)

// The RM's web UI: /cluster (metrics and applications), /cluster/app/{id},
// /cluster/scheduler, /cluster/nodes, server-rendered from the same objects the REST API
// answers with.

//go:embed ui/*.html
var uiFiles embed.FS

type ui struct {
	*rest
	pages   map[string]*template.Template
	host    string
	aggLogs *aggregatedLogs
}

func newUI(s *rest) (*ui, error) {
	pages, err := webui.Templates(uiFiles, "ui/cluster.html", "ui/app.html", "ui/scheduler.html", "ui/nodes.html", "ui/failure.html",
		"ui/about.html", "ui/attempt.html", "ui/container.html", "ui/nodelabels.html", "ui/logs.html")
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	return &ui{rest: s, pages: pages, host: host, aggLogs: readAggregatedLogs(s.rm.Conf())}, nil
}

func (u *ui) routes(mux *http.ServeMux) {
	mux.Handle("GET /static/", webui.Static())
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/cluster", http.StatusFound) })
	for _, p := range []string{"/cluster", "/cluster/{$}", "/cluster/apps", "/cluster/apps/{state}"} {
		mux.HandleFunc("GET "+p, u.cluster)
	}
	mux.HandleFunc("GET /cluster/app/{id}", u.app)
	mux.HandleFunc("GET /cluster/scheduler", u.scheduler)
	mux.HandleFunc("GET /cluster/nodes", u.nodes)
	mux.HandleFunc("GET /cluster/nodes/{state}", u.nodes)
	mux.HandleFunc("GET /cluster/failure/{id}", u.failure)
	// The pages the Java RM has beside those (the MR AM's own navigation links to
	// /cluster/cluster).
	mux.HandleFunc("GET /cluster/cluster", u.about)
	mux.HandleFunc("GET /cluster/appattempt/{id}", u.attempt)
	mux.HandleFunc("GET /cluster/container/{id}", u.container)
	mux.HandleFunc("GET /cluster/nodelabels", u.nodeLabels)
	// Bobbin's: a container's aggregated logs, once its NodeManager has left.
	mux.HandleFunc("GET /cluster/logs/{id}/{user}", u.containerLogs)
	mux.HandleFunc("GET /cluster/logs/{id}/{user}/{file}", u.containerLogs)
}

func (u *ui) render(w http.ResponseWriter, status int, page, title, active string, data any) {
	nav := webui.Nav(active, webui.Link{Href: "/cluster/cluster", Text: "About"}, webui.Link{Href: "/cluster", Text: "Applications"},
		webui.Link{Href: "/cluster/scheduler", Text: "Scheduler"}, webui.Link{Href: "/cluster/nodes", Text: "Nodes"},
		webui.Link{Href: "/cluster/nodelabels", Text: "Node labels"}, webui.Link{Href: "/jmx", Text: "JMX"}, webui.Link{Href: "/conf", Text: "Configuration"},
		webui.Link{Href: "/logs/", Text: "Logs"}, webui.Link{Href: "/logLevel", Text: "Log level"})
	webui.Render(w, u.pages["ui/"+page+".html"], status, webui.Page{Title: title, Daemon: "ResourceManager", Host: u.host,
		Started: time.UnixMilli(u.rm.ClusterTimestamp()), Nav: nav, Data: data})
}

func (u *ui) cluster(w http.ResponseWriter, r *http.Request) {
	state := strings.ToUpper(r.PathValue("state"))
	apps, err := u.appsIn(r, state)
	if err != nil {
		u.render(w, http.StatusBadRequest, "failure", "Bad request", "", err.Error())
		return
	}
	// Newest first, as the Java UI lists them.
	sort.Slice(apps, func(i, j int) bool { return apps[i].ID > apps[j].ID })
	title := "All applications"
	if state != "" {
		title = state + " applications"
	}
	u.render(w, http.StatusOK, "cluster", title, "/cluster", map[string]any{"Metrics": u.metricsInfo(), "Apps": apps, "State": state, "States": appStates})
}

// appsIn are the applications the request's filters select, in states ("": all).
func (u *ui) appsIn(r *http.Request, states string) ([]appInfo, error) {
	q := r.URL.Query()
	if states != "" {
		q.Set("states", states)
	}
	r2 := r.Clone(r.Context())
	r2.URL.RawQuery = q.Encode()
	return u.appInfos(r2)
}

// containerRow is one running container on the application and attempt pages, and the
// container page's container.
type containerRow struct {
	ID, Node, NodeHTTP, State, LogURL string
	MemoryMB, VCores                  int64
	Priority                          int32
	Started, Finished                 int64
	// The container page's.
	App, Attempt, ExecutionType, Diagnostics string
	ExitStatus                               int32
}

// containerRowOf is a live container's report as a row.
func (u *ui) containerRowOf(c *yarnpb.ContainerReportProto) containerRow {
	res := u.rm.ResourceOf(c.GetResource())
	id := records.ContainerIDFromProto(c.GetContainerId())
	return containerRow{ID: id.String(), App: id.Attempt.App.String(), Attempt: id.Attempt.String(),
		Node: net.JoinHostPort(c.GetNodeId().GetHost(), strconv.Itoa(int(c.GetNodeId().GetPort()))), NodeHTTP: strings.TrimPrefix(strings.TrimPrefix(c.GetNodeHttpAddress(), "http://"), "https://"),
		State: strings.TrimPrefix(c.GetContainerState().String(), "C_"), LogURL: c.GetLogUrl(), MemoryMB: res[scheduler.Memory], VCores: res[scheduler.VCores],
		Priority: c.GetPriority().GetPriority(), Started: c.GetCreationTime(), Finished: c.GetFinishTime(), ExecutionType: c.GetExecutionType().String(),
		Diagnostics: c.GetDiagnosticsInfo(), ExitStatus: c.GetContainerExitStatus()}
}

func (u *ui) app(w http.ResponseWriter, r *http.Request) {
	rep, err := u.report(r)
	if err != nil {
		u.render(w, http.StatusNotFound, "failure", "Application not found", "", r.PathValue("id"))
		return
	}
	// Java's AppBlock shows nothing of an application the caller may not view.
	if !u.viewable(w, r, records.AppIDFromProto(rep.GetApplicationId())) {
		return
	}
	u.rm.FillUsage(rep)
	info := u.context(r).appInfo(rep)
	info.AMContainerLogs = u.reachableLogs(info.AMContainerLogs, info.MasterNodeID)
	var rows []containerRow
	if att := rep.GetCurrentApplicationAttemptId(); att != nil {
		rows = u.containerRows(records.AttemptIDFromProto(att))
	}
	final := info.State == "FINISHED" || info.State == "FAILED" || info.State == "KILLED"
	u.render(w, http.StatusOK, "app", "Application "+info.ID, "", map[string]any{"App": info, "Attempts": u.reachableAttempts(rep), "Containers": rows, "Killable": !final})
}

// containerRows are an attempt's live containers, by id.
func (u *ui) containerRows(att records.AttemptID) []containerRow {
	var rows []containerRow
	for _, c := range u.rm.ContainerReports(att) {
		rows = append(rows, u.containerRowOf(c))
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].ID < rows[j].ID })
	return rows
}

// viewable answers for an application the caller may not view as Java's pages do, and
// says whether the page may go on.
func (u *ui) viewable(w http.ResponseWriter, r *http.Request, id records.ApplicationID) bool {
	if u.rm.Settings().ACLEnabled && !u.rm.MayViewApp(callerOf(r), id) {
		u.render(w, http.StatusForbidden, "failure", "Not authorized", "", fmt.Sprintf("You (User %s) are not authorized to view application %s", callerOf(r), id))
		return false
	}
	return true
}

// about is /cluster/cluster: the cluster's identity, versions, HA and store, and its
// metrics (Java's About page).
func (u *ui) about(w http.ResponseWriter, r *http.Request) {
	u.render(w, http.StatusOK, "about", "About the cluster", "/cluster/cluster", map[string]any{"Info": u.clusterInfoNow(), "Metrics": u.metricsInfo()})
}

// attempt is /cluster/appattempt/{id}: an attempt, its AM container and its running
// containers.
func (u *ui) attempt(w http.ResponseWriter, r *http.Request) {
	att, err := records.ParseAttemptID(r.PathValue("id"))
	if err != nil {
		u.render(w, http.StatusBadRequest, "failure", "Bad attempt id", "", err.Error())
		return
	}
	if !u.viewable(w, r, att.App) {
		return
	}
	rep, ok := u.rm.AppReport(att.App)
	if !ok {
		u.render(w, http.StatusNotFound, "failure", "Application not found", "", att.App.String())
		return
	}
	for _, a := range u.reachableAttempts(rep) {
		if a.AppAttemptID == att.String() {
			u.render(w, http.StatusOK, "attempt", "Attempt "+att.String(), "", map[string]any{"App": att.App.String(), "Attempt": a, "Containers": u.containerRows(att)})
			return
		}
	}
	u.render(w, http.StatusNotFound, "failure", "Attempt not found", "", att.String())
}

// container is /cluster/container/{id}: a live container's report.
func (u *ui) container(w http.ResponseWriter, r *http.Request) {
	id, err := records.ParseContainerID(r.PathValue("id"))
	if err != nil {
		u.render(w, http.StatusBadRequest, "failure", "Bad container id", "", err.Error())
		return
	}
	if !u.viewable(w, r, id.Attempt.App) {
		return
	}
	data := map[string]any{"ID": id.String()}
	if rep, ok := u.rm.AppReport(id.Attempt.App); ok {
		data["App"] = id.Attempt.App.String()
		if u.aggLogs.enabled {
			data["Logs"] = "/cluster/logs/" + id.String() + "/" + rep.GetUser()
		}
	}
	if c, ok := u.rm.ContainerReport(id); ok {
		data["Container"] = u.containerRowOf(c)
	}
	u.render(w, http.StatusOK, "container", "Container "+id.String(), "", data)
}

// labelRow is a partition on the node labels page.
type labelRow struct {
	Name             string
	Exclusive        bool
	ActiveNMs        int
	MemoryMB, VCores int64
}

// nodeLabels is /cluster/nodelabels: each partition, its type, its running nodes and
// their resources (Java's NodeLabelsPage).
func (u *ui) nodeLabels(w http.ResponseWriter, r *http.Request) {
	rows := map[string]*labelRow{"": {Name: "", Exclusive: true}}
	for _, l := range u.rm.ClusterLabels() {
		rows[l.Name] = &labelRow{Name: l.Name, Exclusive: l.Exclusive}
	}
	for _, n := range u.nodeInfos([]yarnpb.NodeStateProto{yarnpb.NodeStateProto_NS_RUNNING}, "") {
		part := ""
		for _, l := range n.NodeLabels {
			if _, ok := rows[l]; ok {
				part = l
			}
		}
		row := rows[part]
		row.ActiveNMs++
		row.MemoryMB += n.UsedMemoryMB + n.AvailMemoryMB
		row.VCores += n.UsedVirtualCores + n.AvailableVirtualCores
	}
	var out []*labelRow
	if len(rows) > 1 {
		for _, r := range rows {
			out = append(out, r)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	}
	u.render(w, http.StatusOK, "nodelabels", "Node labels", "/cluster/nodelabels", map[string]any{"Labels": out})
}

// partitionRow is one partition's capacity on the scheduler page.
type partitionRow struct {
	Name             string
	MemoryMB, VCores int64
}

func (u *ui) scheduler(w http.ResponseWriter, r *http.Request) {
	var parts []partitionRow
	for name, total := range u.rm.SchedulerStats().Partitions {
		parts = append(parts, partitionRow{Name: name, MemoryMB: total[scheduler.Memory], VCores: total[scheduler.VCores]})
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].Name < parts[j].Name })
	// The queues' applications not finished yet, by queue.
	apps, err := u.appsIn(r, "NEW,NEW_SAVING,SUBMITTED,ACCEPTED,RUNNING")
	if err != nil {
		u.render(w, http.StatusBadRequest, "failure", "Bad request", "", err.Error())
		return
	}
	sort.Slice(apps, func(i, j int) bool {
		if apps[i].Queue != apps[j].Queue {
			return apps[i].Queue < apps[j].Queue
		}
		return apps[i].ID < apps[j].ID
	})
	u.render(w, http.StatusOK, "scheduler", "Scheduler", "/cluster/scheduler", map[string]any{"Root": u.schedulerInfo(), "Partitions": parts, "Apps": apps})
}

// nodeStates are the states the nodes page filters by, as Java's /cluster/nodes/<state>.
var uiNodeStates = []string{"NEW", "RUNNING", "UNHEALTHY", "DECOMMISSIONING", "DECOMMISSIONED", "LOST", "REBOOTED", "SHUTDOWN"}

func (u *ui) nodes(w http.ResponseWriter, r *http.Request) {
	var states []yarnpb.NodeStateProto
	state := strings.ToUpper(r.PathValue("state"))
	if state != "" {
		v, ok := yarnpb.NodeStateProto_value["NS_"+state]
		if !ok {
			u.render(w, http.StatusBadRequest, "failure", "Bad node state", "", fmt.Sprintf("%s is not a node state (%s)", r.PathValue("state"), strings.Join(uiNodeStates, ", ")))
			return
		}
		states = []yarnpb.NodeStateProto{yarnpb.NodeStateProto(v)}
	}
	nodes := u.nodeInfos(states, "")
	if label := r.URL.Query().Get("label"); label != "" {
		kept := nodes[:0]
		for _, n := range nodes {
			if slices.Contains(n.NodeLabels, label) {
				kept = append(kept, n)
			}
		}
		nodes = kept
	}
	title := "Nodes"
	if state != "" {
		title = state + " nodes"
	}
	u.render(w, http.StatusOK, "nodes", title, "/cluster/nodes", map[string]any{"Nodes": nodes, "State": state, "States": uiNodeStates})
}

func (u *ui) failure(w http.ResponseWriter, r *http.Request) {
	u.render(w, http.StatusOK, "failure", "The web proxy went round in a loop", "", r.PathValue("id"))
}
