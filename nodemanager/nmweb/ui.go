package nmweb

import (
	"embed"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/yarn/secureio"
	"github.com/bobbin-yarn/bobbin/yarn/webui"
)

// The NodeManager's web pages: /node (the node, borrowed-mode state and containers),
// /node/allApplications, /node/allContainers and the container log pages the RM's UI, MR's
// job pages and `yarn` print links to: /node/containerlogs/<container>/<user>[/<file>].

//go:embed ui/*.html
var uiFiles embed.FS

type nmUI struct {
	s     *server
	pages map[string]*template.Template
	host  string
	// rmHome is the ResourceManager's web base ("RM Home", as the Java NM's pages link
	// it; with HA the first RM, whose standby page leads to the active one).
	rmHome string
}

func (s *server) uiRoutes(mux *http.ServeMux) error {
	// Every page may show containers in table.html's "containers" table.
	pages := map[string]*template.Template{}
	for _, p := range []string{"ui/node.html", "ui/apps.html", "ui/containers.html", "ui/logs.html", "ui/application.html", "ui/container.html"} {
		t, err := webui.Templates(uiFiles, p)
		if err == nil {
			_, err = t[p].ParseFS(uiFiles, "ui/table.html")
		}
		if err != nil {
			return fmt.Errorf("nodemanager: the web pages' templates: %w", err)
		}
		pages[p] = t[p]
	}
	host, _ := os.Hostname()
	u := &nmUI{s: s, pages: pages, host: host}
	if webs, err := s.Conf.RMAddresses("yarn.resourcemanager.webapp.address", 8088); err == nil && len(webs) > 0 {
		u.rmHome = "http://" + webs[0]
	}
	mux.Handle("GET /static/", webui.Static())
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/node", http.StatusFound) })
	for _, p := range []string{"/node", "/node/{$}", "/node/node"} {
		mux.HandleFunc("GET "+p, u.node)
	}
	mux.HandleFunc("GET /node/allApplications", u.apps)
	mux.HandleFunc("GET /node/allContainers", u.containers)
	mux.HandleFunc("GET /node/application/{id}", u.application)
	mux.HandleFunc("GET /node/container/{id}", u.container)
	mux.HandleFunc("GET /node/containerlogs/{id}/{user}", u.logs)
	mux.HandleFunc("GET /node/containerlogs/{id}/{user}/{file}", u.logs)
	return nil
}

func (u *nmUI) render(w http.ResponseWriter, status int, page, title, active string, data any) {
	var links []webui.Link
	if u.rmHome != "" {
		links = append(links, webui.Link{Href: u.rmHome + "/cluster", Text: "RM Home"})
	}
	nav := webui.Nav(active, append(links, webui.Link{Href: "/node", Text: "Node"}, webui.Link{Href: "/node/allApplications", Text: "Applications"},
		webui.Link{Href: "/node/allContainers", Text: "Containers"}, webui.Link{Href: "/jmx", Text: "JMX"}, webui.Link{Href: "/conf", Text: "Configuration"},
		webui.Link{Href: "/logs/", Text: "Logs"})...)
	webui.Render(w, u.pages["ui/"+page+".html"], status, webui.Page{Title: title, Daemon: "NodeManager", Host: u.host, Started: u.s.Node.Status().Started, Nav: nav, Data: data})
}

// borrowedView is the borrowed-mode state on the node page.
type borrowedView struct {
	Schedulable    bool
	Reason         string
	MemoryMB       int64
	VCores         int32
	AvgExternalCPU float64 // percent
	Labels         []string
}

func (u *nmUI) node(w http.ResponseWriter, r *http.Request) {
	info := u.s.nodeInfo()
	data := map[string]any{"Info": info, "Containers": newestFirst(u.s.containerInfos())}
	if b, ok := u.s.Node.Borrowed(); ok {
		if d := b.Latest; d != nil {
			data["Borrowed"] = &borrowedView{Schedulable: d.Schedulable, Reason: d.Reason, MemoryMB: d.MemoryMB, VCores: d.VCores,
				AvgExternalCPU: d.AvgExternalCPU * 100, Labels: d.Labels}
		}
	}
	u.render(w, http.StatusOK, "node", "NodeManager "+info.ID, "/node", data)
}

func (u *nmUI) apps(w http.ResponseWriter, r *http.Request) {
	u.render(w, http.StatusOK, "apps", "Applications on this node", "/node/allApplications", u.s.appInfos())
}

func (u *nmUI) containers(w http.ResponseWriter, r *http.Request) {
	u.render(w, http.StatusOK, "containers", "Containers on this node", "/node/allContainers", newestFirst(u.s.containerInfos()))
}

// application is /node/application/{id}: an application on this node and its containers.
func (u *nmUI) application(w http.ResponseWriter, r *http.Request) {
	raw := r.PathValue("id")
	id, err := records.ParseApplicationID(raw)
	if err != nil {
		u.render(w, http.StatusBadRequest, "logs", "Application", "", map[string]any{"Missing": err.Error()})
		return
	}
	for _, a := range u.s.appInfos() {
		if a.ID != id.String() {
			continue
		}
		var mine []nmContainerInfo
		for _, c := range newestFirst(u.s.containerInfos()) {
			if slices.Contains(a.ContainerIDs, c.ID) {
				mine = append(mine, c)
			}
		}
		u.render(w, http.StatusOK, "application", "Application "+a.ID, "", map[string]any{"App": a, "Containers": mine, "RM": u.rmHome})
		return
	}
	u.render(w, http.StatusNotFound, "logs", "Application "+id.String(), "", map[string]any{"Missing": id.String() + " has no container on this node (it never ran here, or it finished and was cleaned up)."})
}

// container is /node/container/{id}: a container on this node.
func (u *nmUI) container(w http.ResponseWriter, r *http.Request) {
	raw := r.PathValue("id")
	id, err := records.ParseContainerID(raw)
	if err != nil {
		u.render(w, http.StatusBadRequest, "logs", "Container", "", map[string]any{"Missing": err.Error()})
		return
	}
	v, ok := u.s.Table.View(id)
	if !ok {
		u.render(w, http.StatusNotFound, "logs", "Container "+id.String(), "", map[string]any{"Missing": id.String() + " is not on this node (it never ran here, or it was cleaned up)."})
		return
	}
	info := u.s.containerInfo(v, u.s.Node.Status())
	u.s.withLogFiles(&info)
	u.render(w, http.StatusOK, "container", "Container "+id.String(), "", map[string]any{"Container": info, "App": id.Attempt.App.String()})
}

// logs lists a container's log files, and shows one (the last 4 KiB unless start says
// otherwise, as the Java NM's page does: start=-N from the end, start=0 the whole file).
func (u *nmUI) logs(w http.ResponseWriter, r *http.Request) {
	raw, user, file := r.PathValue("id"), r.PathValue("user"), r.PathValue("file")
	id, err := records.ParseContainerID(raw)
	if err != nil {
		u.render(w, http.StatusBadRequest, "logs", "Container logs", "", map[string]any{"Missing": "Invalid container id " + raw + ": " + err.Error()})
		return
	}
	// An application the node no longer knows is judged by its aggregated logs' owner
	// and ACLs, where its logs are now; one it knows, here.
	_, known := u.s.Table.App(id.Attempt.App)
	refused := u.s.mayViewLogs(r, id.Attempt.App)
	if refused != "" && known {
		u.render(w, http.StatusForbidden, "logs", "Container logs", "", map[string]any{"Missing": refused})
		return
	}
	data := map[string]any{"Container": id.String(), "User": user}
	title := "Logs of " + id.String()
	entries, found := u.s.Node.ContainerLogs(id, u.s.Table.UserOf(id.Attempt.App))
	var files []webui.LogFile
	for _, e := range entries {
		files = append(files, webui.LogFile{Name: e.Name, Size: e.Size, ModMs: e.ModTime.UnixMilli()})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	data["Files"] = files
	if !found {
		u.aggregatedLogs(w, r, id, user, file, data, title)
		return
	}
	if refused != "" {
		u.render(w, http.StatusForbidden, "logs", "Container logs", "", map[string]any{"Missing": refused})
		return
	}
	if file == "" {
		u.render(w, http.StatusOK, "logs", title, "", data)
		return
	}
	if file != filepath.Base(file) || strings.HasPrefix(file, ".") {
		data["Missing"] = "Invalid log file name " + file
		u.render(w, http.StatusBadRequest, "logs", title, "", data)
		return
	}
	f, err := u.s.Node.OpenContainerLog(id, file)
	if secureio.IsRefused(err) {
		data["Missing"] = "Cannot show this log file: " + err.Error()
		u.render(w, http.StatusForbidden, "logs", title, "", data)
		return
	}
	if err != nil {
		data["Missing"] = "No log file " + file + " of " + id.String() + " on this node."
		u.render(w, http.StatusNotFound, "logs", title, "", data)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		data["Missing"] = "Cannot read log file " + file + ": " + err.Error()
		u.render(w, http.StatusInternalServerError, "logs", title, "", data)
		return
	}
	webui.ShowPart(data, file, io.NewSectionReader(f, 0, st.Size()), st.Size(), webui.LogStart(r))
	u.render(w, http.StatusOK, "logs", title, "", data)
}

// aggregatedLogs answers for a container whose logs are no longer on this node: from its
// application's aggregated logs, which the node reads itself (the link works as long as
// they are kept), else, as the Java NM does, a redirect to yarn.log.server.url, else why
// there is nothing to show.
func (u *nmUI) aggregatedLogs(w http.ResponseWriter, r *http.Request, id records.ContainerID, user, file string, data map[string]any, title string) {
	if !webui.ValidUser(user) {
		data["Missing"] = "Invalid user name " + user
		u.render(w, http.StatusBadRequest, "logs", title, "", data)
		return
	}
	agg, where, err := u.s.Node.AggregatedLogs(id, user)
	if err != nil {
		if server, _ := u.s.Conf.Trimmed("yarn.log.server.url"); server != "" {
			// LogServer/<node>/<container>/<container>/<user>, as ContainerLogsPage builds it.
			http.Redirect(w, r, strings.TrimSuffix(server, "/")+"/"+u.s.Node.Status().ID+"/"+id.String()+"/"+id.String()+"/"+user, http.StatusFound)
			return
		}
		data["Missing"] = "No logs of " + id.String() + " on this node (it never ran here, or its logs were deleted after yarn.nodemanager.log.retain-seconds), " +
			"and none could be read from the aggregated logs: " + err.Error() + "."
		u.render(w, http.StatusNotFound, "logs", title, "", data)
		return
	}
	if why := u.s.mayViewAggregated(r, id.Attempt.App, agg); why != "" {
		u.render(w, http.StatusForbidden, "logs", title, "", map[string]any{"Missing": why})
		return
	}
	data["Aggregated"] = where
	if !webui.AggregatedLogPage(data, agg.Logs, file, r) {
		data["Missing"] = "No log file " + file + " of " + id.String() + " in its aggregated logs."
		u.render(w, http.StatusNotFound, "logs", title, "", data)
		return
	}
	u.render(w, http.StatusOK, "logs", title, "", data)
}

// newestFirst reverses a list sorted by id: the pages show the newest containers first.
func newestFirst(list []nmContainerInfo) []nmContainerInfo {
	slices.Reverse(list)
	return list
}
