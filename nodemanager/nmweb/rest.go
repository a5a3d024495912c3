package nmweb

import (
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/bobbin-yarn/bobbin/conf/resourcetypes"
	"github.com/bobbin-yarn/bobbin/nodemanager/containers"

	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/yarn/secureio"
	"github.com/bobbin-yarn/bobbin/yarn/webapp"
)

// The NodeManager REST API under /ws/v1/node in the Java NM's shapes (NMWebServices):
// the node, its applications and containers, and container log files.

// nodeInfo is NMWebServices' NodeInfo.
type nodeInfo struct {
	HealthReport                   string `json:"healthReport"`
	TotalVmemAllocatedContainersMB int64  `json:"totalVmemAllocatedContainersMB"`
	TotalPmemAllocatedContainersMB int64  `json:"totalPmemAllocatedContainersMB"`
	TotalVCoresAllocatedContainers int64  `json:"totalVCoresAllocatedContainers"`
	VmemCheckEnabled               bool   `json:"vmemCheckEnabled"`
	PmemCheckEnabled               bool   `json:"pmemCheckEnabled"`
	LastNodeUpdateTime             int64  `json:"lastNodeUpdateTime"`
	ResourceTypes                  string `json:"resourceTypes"`
	NodeHealthy                    bool   `json:"nodeHealthy"`
	NodeManagerVersion             string `json:"nodeManagerVersion"`
	NodeManagerBuildVersion        string `json:"nodeManagerBuildVersion"`
	NodeManagerVersionBuiltOn      string `json:"nodeManagerVersionBuiltOn"`
	HadoopVersion                  string `json:"hadoopVersion"`
	HadoopBuildVersion             string `json:"hadoopBuildVersion"`
	HadoopVersionBuiltOn           string `json:"hadoopVersionBuiltOn"`
	ID                             string `json:"id"`
	NodeHostName                   string `json:"nodeHostName"`
	NMStartupTime                  int64  `json:"nmStartupTime"`
}

// nmAppInfo is NMWebServices' AppInfo.
type nmAppInfo struct {
	ID           string   `json:"id"`
	State        string   `json:"state"`
	User         string   `json:"user"`
	ContainerIDs []string `json:"containerids,omitempty"`
}

// nmContainerInfo is NMWebServices' ContainerInfo.
type nmContainerInfo struct {
	ID                  string   `json:"id"`
	State               string   `json:"state"`
	ExitCode            int32    `json:"exitCode"`
	Diagnostics         string   `json:"diagnostics"`
	User                string   `json:"user"`
	TotalMemoryNeededMB int64    `json:"totalMemoryNeededMB"`
	TotalVCoresNeeded   int32    `json:"totalVCoresNeeded"`
	ContainerLogsLink   string   `json:"containerLogsLink"`
	NodeID              string   `json:"nodeId"`
	ContainerLogFiles   []string `json:"containerLogFiles"`
	ExecutionType       string   `json:"executionType"`
}

func (s *server) restRoutes(mux *http.ServeMux) {
	for _, p := range []string{"/ws/v1/node", "/ws/v1/node/{$}", "/ws/v1/node/info"} {
		mux.HandleFunc("GET "+p, s.restInfo)
	}
	mux.HandleFunc("GET /ws/v1/node/apps", s.restApps)
	mux.HandleFunc("GET /ws/v1/node/apps/{id}", s.restApp)
	mux.HandleFunc("GET /ws/v1/node/containers", s.restContainers)
	mux.HandleFunc("GET /ws/v1/node/containers/{id}", s.restContainer)
	mux.HandleFunc("GET /ws/v1/node/containerlogs/{id}/{file}", s.restContainerLog)
}

func (s *server) restInfo(w http.ResponseWriter, r *http.Request) {
	webapp.Write(w, r, http.StatusOK, map[string]any{"nodeInfo": s.nodeInfo()})
}

// nodeInfo is the node's NodeInfo now.
func (s *server) nodeInfo() nodeInfo {
	r, st := s.Resources, s.Node.Status()
	health := st.Health
	return nodeInfo{
		HealthReport: health.GetHealthReport(), TotalVmemAllocatedContainersMB: r.VmemMB, TotalPmemAllocatedContainersMB: r.MemoryMB,
		TotalVCoresAllocatedContainers: int64(r.VCores), VmemCheckEnabled: r.VmemCheck, PmemCheckEnabled: r.PmemCheck,
		LastNodeUpdateTime: health.GetLastHealthReportTime(), ResourceTypes: typesSummary(r.Types), NodeHealthy: health.GetIsNodeHealthy(),
		NodeManagerVersion: s.Version, NodeManagerBuildVersion: s.Version + " (Bobbin)", NodeManagerVersionBuiltOn: buildDate,
		HadoopVersion: s.Version, HadoopBuildVersion: s.Version + " (Bobbin)", HadoopVersionBuiltOn: buildDate,
		ID: st.ID, NodeHostName: r.Host, NMStartupTime: st.Started.UnixMilli(),
	}
}

// typesSummary lists the resource types as the Java NM's node page does: "memory-mb
// (unit=Mi), vcores".
func typesSummary(t resourcetypes.Types) string {
	var parts []string
	for _, ty := range t.All() {
		if ty.Units != "" {
			parts = append(parts, ty.Name+" (unit="+ty.Units+")")
		} else {
			parts = append(parts, ty.Name)
		}
	}
	return strings.Join(parts, ", ")
}

// buildDate stands for the Java NM's build date, which clients show but never parse.
const buildDate = "Bobbin"

// appInfos lists the node's applications, with the containers each has here.
func (s *server) appInfos() []nmAppInfo {
	sums := s.Table.Summaries()
	out := make([]nmAppInfo, 0, len(sums))
	for _, a := range sums {
		out = append(out, nmAppInfo{ID: a.ID.String(), State: "RUNNING", User: a.User, ContainerIDs: a.Containers})
	}
	return out
}

func (s *server) restApps(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if st := q.Get("state"); st != "" && !validAppState[st] {
		webapp.WriteError(w, r, &webapp.Error{Class: "java.lang.IllegalArgumentException",
			Msg: "No enum constant org.apache.hadoop.yarn.server.nodemanager.containermanager.application.ApplicationState." + st})
		return
	}
	var list []nmAppInfo
	for _, a := range s.appInfos() {
		if (q.Get("state") == "" || q.Get("state") == a.State) && (q.Get("user") == "" || q.Get("user") == a.User) {
			list = append(list, a)
		}
	}
	if len(list) == 0 {
		webapp.Write(w, r, http.StatusOK, map[string]any{"apps": nil})
		return
	}
	webapp.Write(w, r, http.StatusOK, map[string]any{"apps": map[string]any{"app": list}})
}

// validAppState are the Java NM's ApplicationState names.
var validAppState = map[string]bool{"NEW": true, "INITING": true, "RUNNING": true, "FINISHING_CONTAINERS_WAIT": true,
	"APPLICATION_RESOURCES_CLEANINGUP": true, "FINISHED": true}

func (s *server) restApp(w http.ResponseWriter, r *http.Request) {
	raw := r.PathValue("id")
	id, err := records.ParseApplicationID(raw)
	if err != nil {
		webapp.WriteError(w, r, webapp.BadRequest("Invalid ApplicationId: %s", raw))
		return
	}
	for _, a := range s.appInfos() {
		if a.ID == id.String() {
			webapp.Write(w, r, http.StatusOK, map[string]any{"app": a})
			return
		}
	}
	webapp.WriteError(w, r, webapp.NotFound("app with id %s not found", raw))
}

// containerInfo describes a container, without its log files (withLogFiles adds them: it
// reads the disk and may look the user up).
func (s *server) containerInfo(v containers.View, st Status) nmContainerInfo {
	r := v.Resource()
	info := nmContainerInfo{ID: v.ID.String(), State: v.Phase.JavaState(), ExitCode: -1000, Diagnostics: v.Diag, User: v.User,
		TotalMemoryNeededMB: r.GetMemory(), TotalVCoresNeeded: r.GetVirtualCores(), NodeID: st.ID,
		ContainerLogsLink: "http://" + st.HTTPAddress + "/node/containerlogs/" + v.ID.String() + "/" + v.User,
		ContainerLogFiles: []string{}, ExecutionType: v.Ident.GetExecutionType().String()}
	if v.Phase == containers.Done {
		info.ExitCode = v.Exit
	}
	return info
}

// withLogFiles lists the container's log files into info (the files openContainerLog
// would serve).
func (s *server) withLogFiles(info *nmContainerInfo) {
	id, err := records.ParseContainerID(info.ID)
	if err != nil {
		return
	}
	files, _ := s.Node.ContainerLogs(id, info.User)
	for _, f := range files {
		info.ContainerLogFiles = append(info.ContainerLogFiles, f.Name)
	}
}

func (s *server) restContainers(w http.ResponseWriter, r *http.Request) {
	list := s.containerInfos()
	if len(list) == 0 {
		webapp.Write(w, r, http.StatusOK, map[string]any{"containers": nil})
		return
	}
	webapp.Write(w, r, http.StatusOK, map[string]any{"containers": map[string]any{"container": list}})
}

func (s *server) restContainer(w http.ResponseWriter, r *http.Request) {
	raw := r.PathValue("id")
	id, err := records.ParseContainerID(raw)
	if err != nil {
		webapp.WriteError(w, r, webapp.BadRequest("invalid container id, %s", raw))
		return
	}
	v, ok := s.Table.View(id)
	if !ok {
		webapp.WriteError(w, r, webapp.NotFound("container with id, %s, not found", raw))
		return
	}
	info := s.containerInfo(v, s.Node.Status())
	s.withLogFiles(&info)
	webapp.Write(w, r, http.StatusOK, map[string]any{"container": info})
}

// restContainerLog serves one log file of a container, as text (the Java NM's
// /ws/v1/node/containerlogs/{containerid}/{filename}).
func (s *server) restContainerLog(w http.ResponseWriter, r *http.Request) {
	id, err := records.ParseContainerID(r.PathValue("id"))
	if err != nil {
		http.Error(w, "Invalid ContainerId: "+r.PathValue("id"), http.StatusBadRequest)
		return
	}
	if why := s.mayViewLogs(r, id.Attempt.App); why != "" {
		http.Error(w, why, http.StatusForbidden)
		return
	}
	name := r.PathValue("file")
	if name != filepath.Base(name) || name == "." || name == ".." {
		http.Error(w, "Invalid file name: "+name, http.StatusBadRequest)
		return
	}
	f, err := s.Node.OpenContainerLog(id, name)
	if secureio.IsRefused(err) {
		http.Error(w, "Cannot serve this log file: "+err.Error(), http.StatusForbidden)
		return
	}
	if err != nil {
		http.Error(w, "Cannot find this log on the local disk.", http.StatusNotFound)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	var mod time.Time
	if st, err := f.Stat(); err == nil {
		mod = st.ModTime()
	}
	http.ServeContent(w, r, "", mod, f)
}

// containerInfos lists the node's containers by id.
func (s *server) containerInfos() []nmContainerInfo {
	views, st := s.Table.Views(), s.Node.Status()
	list := make([]nmContainerInfo, 0, len(views))
	for _, v := range views {
		info := s.containerInfo(v, st)
		s.withLogFiles(&info)
		list = append(list, info)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	return list
}
