package rmweb

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/bobbin-yarn/bobbin/records"
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

// labelInfos describes labels by name, with their exclusivity (a name the cluster no
// longer has reads as exclusive, the default).
func (s *rest) labelInfos(names []string) []nodeLabelInfo {
	exclusive := map[string]bool{}
	for _, l := range s.rm.ClusterLabels() {
		exclusive[l.Name] = l.Exclusive
	}
	out := make([]nodeLabelInfo, 0, len(names))
	for _, n := range names {
		e, ok := exclusive[n]
		out = append(out, nodeLabelInfo{Name: n, Exclusivity: fmt.Sprint(e || !ok)})
	}
	return out
}

// exclusive reads a written label's exclusivity: "true"/"false" or a boolean, true when
// absent.
func (l nodeLabelInfo) exclusive() (bool, error) {
	switch v := l.Exclusivity.(type) {
	case nil:
		return true, nil
	case bool:
		return v, nil
	case string:
		if b, err := strconv.ParseBool(strings.TrimSpace(v)); err == nil {
			return b, nil
		}
	}
	return false, fmt.Errorf("exclusivity of label %s is %v, not true or false", l.Name, l.Exclusivity)
}

// clusterLabelNames is the cluster's labels by name.
func clusterLabelNames(rm *rmcore.Core) []string {
	var out []string
	for _, l := range rm.ClusterLabels() {
		out = append(out, l.Name)
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
	writeBare(w, r, http.StatusOK, "nodeLabelsInfo", nodeLabelsInfo{NodeLabelInfo: s.labelInfos(clusterLabelNames(s.rm))})
}

func (s *rest) getNodeToLabels(w http.ResponseWriter, r *http.Request) {
	m := s.rm.NodeLabels()
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	entries := make([]map[string]any, 0, len(keys))
	for _, k := range keys {
		entries = append(entries, map[string]any{"key": k, "value": nodeLabelsInfo{NodeLabelInfo: s.labelInfos(m[k])}})
	}
	writeBare(w, r, http.StatusOK, "nodeToLabelsInfo", map[string]any{"nodeToLabels": map[string]any{"entry": entries}})
}

func (s *rest) labelMappings(w http.ResponseWriter, r *http.Request) {
	want := map[string]bool{}
	for _, l := range params(r, "labels") {
		want[l] = true
	}
	byLabel := map[string][]string{}
	for node, labels := range s.rm.NodeLabels() {
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
	for i, info := range s.labelInfos(labels) {
		sort.Strings(byLabel[labels[i]])
		entries = append(entries, map[string]any{"key": info, "value": map[string]any{"nodes": byLabel[labels[i]]}})
	}
	writeBare(w, r, http.StatusOK, "labelsToNodesInfo", map[string]any{"labelsToNodes": map[string]any{"entry": entries}})
}

func (s *rest) getLabelsOfNode(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	writeBare(w, r, http.StatusOK, "nodeLabelsInfo", nodeLabelsInfo{NodeLabelInfo: s.labelInfos(s.rm.NodeLabels()[id])})
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
	var labels []rmstate.Label
	for _, n := range in.NodeLabels {
		labels = append(labels, rmstate.Label{Name: n, Exclusive: true})
	}
	for _, l := range in.NodeLabelInfo {
		exclusive, err := l.exclusive()
		if err != nil {
			webapp.WriteError(w, r, webapp.BadRequest("%v", err))
			return
		}
		labels = append(labels, rmstate.Label{Name: l.Name, Exclusive: exclusive})
	}
	labelWrite(w, r, s.rm.AddClusterLabels(labels))
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
	return rmstate.NodeKey(records.NodeIDFromKey(id)), nil
}
