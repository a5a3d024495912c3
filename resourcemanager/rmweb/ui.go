package rmweb

import (
	"embed"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

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
	pages map[string]*template.Template
	host  string
}

func newUI(s *rest) (*ui, error) {
	pages, err := webui.Templates(uiFiles, "ui/cluster.html", "ui/app.html", "ui/scheduler.html", "ui/nodes.html", "ui/failure.html")
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	return &ui{rest: s, pages: pages, host: host}, nil
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
	mux.HandleFunc("GET /cluster/failure/{id}", u.failure)
}

func (u *ui) render(w http.ResponseWriter, status int, page, title, active string, data any) {
	nav := webui.Nav(active, webui.Link{Href: "/cluster", Text: "Applications"}, webui.Link{Href: "/cluster/scheduler", Text: "Scheduler"},
		webui.Link{Href: "/cluster/nodes", Text: "Nodes"}, webui.Link{Href: "/jmx", Text: "JMX"}, webui.Link{Href: "/conf", Text: "Configuration"},
		webui.Link{Href: "/logLevel", Text: "Log level"})
	webui.Render(w, u.pages["ui/"+page+".html"], status, webui.Page{Title: title, Daemon: "ResourceManager", Host: u.host,
		Started: time.UnixMilli(u.rm.ClusterTimestamp()), Nav: nav, Data: data})
}

func (u *ui) cluster(w http.ResponseWriter, r *http.Request) {
	state := strings.ToUpper(r.PathValue("state"))
	q := r.URL.Query()
	if state != "" {
		q.Set("states", state)
	}
	r2 := r.Clone(r.Context())
	r2.URL.RawQuery = q.Encode()
	apps, err := u.appInfos(r2)
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

// containerRow is one running container on the application page.
type containerRow struct {
	ID, Node, State, LogURL string
	MemoryMB, VCores        int64
	Priority                int32
	Started                 int64
}

func (u *ui) app(w http.ResponseWriter, r *http.Request) {
	rep, err := u.report(r)
	if err != nil {
		u.render(w, http.StatusNotFound, "failure", "Application not found", "", r.PathValue("id"))
		return
	}
	// Java's AppBlock shows nothing of an application the caller may not view.
	if id := records.AppIDFromProto(rep.GetApplicationId()); u.rm.Settings().ACLEnabled && !u.rm.MayViewApp(callerOf(r), id) {
		u.render(w, http.StatusForbidden, "failure", "Not authorized", "", fmt.Sprintf("You (User %s) are not authorized to view application %s", callerOf(r), id))
		return
	}
	u.rm.FillUsage(rep)
	info := u.context(r).appInfo(rep)
	var rows []containerRow
	if att := rep.GetCurrentApplicationAttemptId(); att != nil {
		for _, c := range u.rm.ContainerReports(records.AttemptIDFromProto(att)) {
			res := u.rm.ResourceOf(c.GetResource())
			rows = append(rows, containerRow{ID: records.ContainerIDFromProto(c.GetContainerId()).String(),
				Node: net.JoinHostPort(c.GetNodeId().GetHost(), strconv.Itoa(int(c.GetNodeId().GetPort()))), State: strings.TrimPrefix(c.GetContainerState().String(), "C_"),
				LogURL: c.GetLogUrl(), MemoryMB: res[scheduler.Memory], VCores: res[scheduler.VCores], Priority: c.GetPriority().GetPriority(),
				Started: c.GetCreationTime()})
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].ID < rows[j].ID })
	u.render(w, http.StatusOK, "app", "Application "+info.ID, "", map[string]any{"App": info, "Attempts": u.attemptInfos(rep), "Containers": rows})
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
	u.render(w, http.StatusOK, "scheduler", "Scheduler", "/cluster/scheduler", map[string]any{"Root": u.schedulerInfo(), "Partitions": parts})
}

func (u *ui) nodes(w http.ResponseWriter, r *http.Request) {
	u.render(w, http.StatusOK, "nodes", "Nodes", "/cluster/nodes", map[string]any{"Nodes": u.nodeInfos(nil, "")})
}

func (u *ui) failure(w http.ResponseWriter, r *http.Request) {
	u.render(w, http.StatusOK, "failure", "The web proxy went round in a loop", "", r.PathValue("id"))
}
