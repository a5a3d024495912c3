package resourcemanager

import (
	"strings"
	"testing"

	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
)

// The node-label resources: the writes need a named administrator and
// yarn.node-labels.enabled, as rmadmin's calls do; the reads show what they did.
func TestRESTNodeLabels(t *testing.T) {
	c := testConf()
	c.Set("yarn.node-labels.enabled", "true")
	sc := newSimCluster(t, c, 1, nil)
	node := rmstate.NodeKey(sc.nms[0].NodeID())
	add := `{"nodeLabelInfo":[{"name":"gpu","exclusivity":"true"}]}`
	if code, v, raw := restCall(t, sc.rm, "POST", "/ws/v1/cluster/add-node-labels", "", add); code != 401 || v["RemoteException"] == nil {
		t.Errorf("anonymous add: %d %s", code, raw)
	}
	if code, _, raw := restCall(t, sc.rm, "POST", "/ws/v1/cluster/add-node-labels?user.name=admin", "", `{"nodeLabelInfo":[{"name":"bad label"}]}`); code == 200 {
		t.Errorf("a label with a space was added: %s", raw)
	}
	if code, _, raw := restCall(t, sc.rm, "POST", "/ws/v1/cluster/add-node-labels?user.name=admin", "", "{not json"); code != 400 {
		t.Errorf("malformed body: %d %s", code, raw)
	}
	if code, _, raw := restCall(t, sc.rm, "POST", "/ws/v1/cluster/add-node-labels?user.name=admin", "", add); code != 200 {
		t.Fatalf("add: %d %s", code, raw)
	}
	// 2.7.3's body form too.
	if code, _, raw := restCall(t, sc.rm, "POST", "/ws/v1/cluster/add-node-labels?user.name=admin", "", `{"nodeLabels":["ssd"]}`); code != 200 {
		t.Fatalf("add (2.7.3 body): %d %s", code, raw)
	}
	if code, _, raw := restCall(t, sc.rm, "POST", "/ws/v1/cluster/nodes/"+node+"/replace-labels?labels=gpu&user.name=admin", "", ""); code != 200 {
		t.Fatalf("replace: %d %s", code, raw)
	}
	for path, want := range map[string]string{
		"/ws/v1/cluster/get-node-labels":               `{"nodeLabelInfo":[{"name":"gpu","exclusivity":"true"},{"name":"ssd","exclusivity":"true"}]}`,
		"/ws/v1/cluster/get-node-to-labels":            `{"nodeToLabels":{"entry":[{"key":"` + node + `","value":{"nodeLabelInfo":[{"name":"gpu","exclusivity":"true"}]}}]}}`,
		"/ws/v1/cluster/label-mappings?labels=gpu":     `{"labelsToNodes":{"entry":[{"key":{"name":"gpu","exclusivity":"true"},"value":{"nodes":["` + node + `"]}}]}}`,
		"/ws/v1/cluster/nodes/" + node + "/get-labels": `{"nodeLabelInfo":[{"name":"gpu","exclusivity":"true"}]}`,
	} {
		if code, _, raw := restCall(t, sc.rm, "GET", path, "", ""); code != 200 || raw != want {
			t.Errorf("%s: %d %s\nwant %s", path, code, raw, want)
		}
	}
	if _, _, raw := restCall(t, sc.rm, "GET", "/ws/v1/cluster/get-node-labels", "application/xml", ""); !strings.Contains(raw, "<nodeLabelsInfo><nodeLabelInfo><name>gpu</name>") {
		t.Errorf("XML: %s", raw)
	}
	if code, _, raw := restCall(t, sc.rm, "POST", "/ws/v1/cluster/remove-node-labels?labels=ssd&user.name=admin", "", ""); code != 200 {
		t.Fatalf("remove: %d %s", code, raw)
	}
	if _, _, raw := restCall(t, sc.rm, "GET", "/ws/v1/cluster/get-node-labels", "", ""); strings.Contains(raw, "ssd") {
		t.Errorf("ssd still there: %s", raw)
	}
	// Without yarn.node-labels.enabled the writes are refused with the RPC's exception.
	off := newSimCluster(t, testConf(), 0, nil)
	if code, _, raw := restCall(t, off.rm, "POST", "/ws/v1/cluster/add-node-labels?user.name=admin", "", add); code == 200 || !strings.Contains(raw, "yarn.node-labels.enabled") {
		t.Errorf("labels off: %d %s", code, raw)
	}
}
