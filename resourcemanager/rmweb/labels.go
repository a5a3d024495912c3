package rmweb

import (
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/bobbin-yarn/bobbin/resourcemanager/rmcore"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/yarn/webapp"
)

// The node-label resources of the 3.x RM REST API (written, as the Java RM writes these,
// without a root element): the cluster's labels, which nodes
// carry which, and the administrator's writes (add, remove, replace), which go through
// the same checks as `yarn rmadmin` (yarn.node-labels.enabled, yarn.admin.acl).

// nodeLabelInfo is NodeLabelInfo; the Java RM writes exclusivity as a string, and reads
// either.
type nodeLabelInfo struct {
	Name        string `json:"name"`
	Exclusivity any    `json:"exclusivity"`
}

// nodeLabelsInfo is NodeLabelsInfo; a 2.7.3 client sends the labels as nodeLabels.
type nodeLabelsInfo struct {
	NodeLabelInfo []nodeLabelInfo `json:"nodeLabelInfo"`
	NodeLabels    []string        `json:"nodeLabels,omitempty"`
}

func labelInfos(names []string) []nodeLabelInfo {
	out := make([]nodeLabelInfo, 0, len(names))
	for _, n := range names {
		// Bobbin's partitions are exclusive, as a label added without (exclusive=false).
		out = append(out, nodeLabelInfo{Name: n, Exclusivity: "true"})
	}
	return out
}

func (s *rest) labelRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /ws/v1/cluster/get-node-labels", s.getNodeLabels)
	mux.HandleFunc("GET /ws/v1/cluster/get-node-to-labels", s.getNodeToLabels)
	mux.HandleFunc("GET /ws/v1/cluster/label-mappings", s.labelMappings)
	mux.HandleFunc("GET /ws/v1/cluster/nodes/{id}/get-labels", s.getLabelsOfNode)
	mux.HandleFunc("POST /ws/v1/cluster/add-node-labels", s.addNodeLabels)
	mux.HandleFunc("POST /ws/v1/cluster/remove-node-labels", s.removeNodeLabels)
	mux.HandleFunc("POST /ws/v1/cluster/replace-node-to-labels", s.replaceNodeToLabels)
	mux.HandleFunc("POST /ws/v1/cluster/nodes/{id}/replace-labels", s.replaceLabelsOfNode)
}

func (s *rest) getNodeLabels(w http.ResponseWriter, r *http.Request) {
	writeBare(w, r, http.StatusOK, "nodeLabelsInfo", nodeLabelsInfo{NodeLabelInfo: labelInfos(s.rm.Labels.ClusterLabels())})
}

func (s *rest) getNodeToLabels(w http.ResponseWriter, r *http.Request) {
	m := s.rm.Labels.Snapshot()
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	entries := make([]map[string]any, 0, len(keys))
	for _, k := range keys {
		entries = append(entries, map[string]any{"key": k, "value": nodeLabelsInfo{NodeLabelInfo: labelInfos(m[k])}})
	}
	writeBare(w, r, http.StatusOK, "nodeToLabelsInfo", map[string]any{"nodeToLabels": map[string]any{"entry": entries}})
}

func (s *rest) labelMappings(w http.ResponseWriter, r *http.Request) {
	want := map[string]bool{}
	for _, l := range params(r, "labels") {
		want[l] = true
	}
	byLabel := map[string][]string{}
	for node, labels := range s.rm.Labels.Snapshot() {
		for _, l := range labels {
			if len(want) == 0 || want[l] {
				byLabel[l] = append(byLabel[l], node)
			}
		}
	}
	labels := make([]string, 0, len(byLabel))
	for l := range byLabel {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	entries := make([]map[string]any, 0, len(labels))
	for _, l := range labels {
		sort.Strings(byLabel[l])
		entries = append(entries, map[string]any{"key": nodeLabelInfo{Name: l, Exclusivity: "true"},
			"value": map[string]any{"nodes": byLabel[l]}})
	}
	writeBare(w, r, http.StatusOK, "labelsToNodesInfo", map[string]any{"labelsToNodes": map[string]any{"entry": entries}})
}

func (s *rest) getLabelsOfNode(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	writeBare(w, r, http.StatusOK, "nodeLabelsInfo", nodeLabelsInfo{NodeLabelInfo: labelInfos(s.rm.Labels.Snapshot()[id])})
}

// labelAdmin answers false (having written the error) unless the caller may administer
// labels: a named user (the Java RM refuses the anonymous web user) in yarn.admin.acl.
func (s *rest) labelAdmin(w http.ResponseWriter, r *http.Request, op string) bool {
	user := r.URL.Query().Get("user.name")
	if user == "" {
		webapp.WriteError(w, r, &webapp.Error{Class: webapp.ClassAuthz, Msg: "Unable to obtain user name, user not authenticated"})
		return false
	}
	if !s.rm.IsAdmin(user) {
		webapp.WriteError(w, r, &webapp.Error{Class: webapp.ClassAuthz, Msg: fmt.Sprintf("User %s doesn't have permission to call '%s'", user, op)})
		return false
	}
	return true
}

// labelWrite answers a write: 200 when it took effect, else the RPC layer's exception.
func labelWrite(w http.ResponseWriter, r *http.Request, err error) {
	if err != nil {
		webapp.WriteError(w, r, webapp.FromRPC(err))
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (s *rest) addNodeLabels(w http.ResponseWriter, r *http.Request) {
	if !s.labelAdmin(w, r, "addToClusterNodeLabels") {
		return
	}
	var in nodeLabelsInfo
	if err := webapp.ReadJSON(r, &in); err != nil {
		webapp.WriteError(w, r, err)
		return
	}
	names := append([]string(nil), in.NodeLabels...)
	for _, l := range in.NodeLabelInfo {
		names = append(names, l.Name)
	}
	labelWrite(w, r, s.rm.AddClusterLabels(names))
}

func (s *rest) removeNodeLabels(w http.ResponseWriter, r *http.Request) {
	if !s.labelAdmin(w, r, "removeFromClusterNodeLabels") {
		return
	}
	names := params(r, "labels")
	if len(names) == 0 {
		webapp.WriteError(w, r, webapp.BadRequest("Node labels cannot be empty."))
		return
	}
	labelWrite(w, r, s.rm.RemoveClusterLabels(names))
}

// nodeToLabelsEntryList is the body of replace-node-to-labels.
type nodeToLabelsEntryList struct {
	NodeToLabels []struct {
		NodeID     string   `json:"nodeId"`
		NodeLabels []string `json:"nodeLabels"`
	} `json:"nodeToLabels"`
}

func (s *rest) replaceNodeToLabels(w http.ResponseWriter, r *http.Request) {
	if !s.labelAdmin(w, r, "replaceLabelsOnNode") {
		return
	}
	var in nodeToLabelsEntryList
	if err := webapp.ReadJSON(r, &in); err != nil {
		webapp.WriteError(w, r, err)
		return
	}
	m := map[string][]string{}
	for _, e := range in.NodeToLabels {
		key, err := nodeKey(e.NodeID)
		if err != nil {
			webapp.WriteError(w, r, err)
			return
		}
		m[key] = e.NodeLabels
	}
	labelWrite(w, r, s.rm.ReplaceNodeLabels(m, false))
}

func (s *rest) replaceLabelsOfNode(w http.ResponseWriter, r *http.Request) {
	if !s.labelAdmin(w, r, "replaceLabelsOnNode") {
		return
	}
	key, err := nodeKey(r.PathValue("id"))
	if err != nil {
		webapp.WriteError(w, r, err)
		return
	}
	labelWrite(w, r, s.rm.ReplaceNodeLabels(map[string][]string{key: params(r, "labels")}, false))
}

// nodeKey checks a host:port node id ("host" alone is every NodeManager of the host).
func nodeKey(id string) (string, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return "", webapp.BadRequest("Invalid nodeId: empty")
	}
	if !strings.Contains(id, ":") {
		id += ":0"
	}
	return rmstate.NodeKey(rmcore.NodeIDOf(id)), nil
}
