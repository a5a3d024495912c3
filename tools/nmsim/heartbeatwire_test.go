package nmsim

import (
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
	"github.com/bobbin-yarn/bobbin/yarn/security"
)

// The heartbeat written as bytes is the message a Java NM sends: the node's status with
// every container's status (a completed one until the RM has had it), and the keys.
func TestHeartbeatBytesAreTheRequestMessage(t *testing.T) {
	keys := security.NewNodeKeys()
	keys.Update(&yarnpb.MasterKeyProto{KeyId: proto.Int32(7), Bytes: []byte("container-key")}, &yarnpb.MasterKeyProto{KeyId: proto.Int32(9), Bytes: []byte("nm-key")})
	n := &NodeManager{nodeID: &yarnpb.NodeIdProto{Host: proto.String("h1"), Port: proto.Int32(4545)}, keys: keys, responseID: 12}
	app := records.ApplicationID{ClusterTimestamp: 1700000000000, ID: 3}
	add := func(id int64, state yarnpb.ContainerStateProto, exit int32, diag string, reported bool) {
		cid := records.ContainerID{Attempt: records.AttemptID{App: app, Attempt: 1}, ID: id}
		c := simContainer{id: cid, state: state, exit: exit, diag: diag}
		if reported {
			c.reportedIn = 1 // in heartbeat 1, which the RM answered
		}
		n.containers = append(n.containers, c)
	}
	add(1, yarnpb.ContainerStateProto_C_RUNNING, exitcode.Invalid, "", false)
	add(2, yarnpb.ContainerStateProto_C_COMPLETE, 0, "", false)
	add(3, yarnpb.ContainerStateProto_C_COMPLETE, exitcode.KilledByResourceManager, "Container Killed by ResourceManager", false)
	add(4, yarnpb.ContainerStateProto_C_COMPLETE, 0, "", true) // the RM has had it
	add(1<<40+5, yarnpb.ContainerStateProto_C_NEW, exitcode.Invalid, "", false)
	now := time.UnixMilli(1700000123456)

	n.sent, n.answered = 2, 1
	b, fresh, err := n.appendHeartbeatLocked([]byte("reused buffer"), now, 2)
	if err != nil {
		t.Fatal(err)
	}
	var got yarnpb.NodeHeartbeatRequestProto
	if err := proto.Unmarshal(b[len("reused buffer"):], &got); err != nil {
		t.Fatal(err)
	}
	want := &yarnpb.NodeHeartbeatRequestProto{NodeStatus: &yarnpb.NodeStatusProto{NodeId: n.nodeID, ResponseId: proto.Int32(12),
		NodeHealthStatus: &yarnpb.NodeHealthStatusProto{IsNodeHealthy: proto.Bool(true), HealthReport: proto.String(""), LastHealthReportTime: proto.Int64(now.UnixMilli())}}}
	want.LastKnownContainerTokenMasterKey, want.LastKnownNmTokenMasterKey = keys.LastKnown()
	// Match the statuses by id.
	byID := map[records.ContainerID]*yarnpb.ContainerStatusProto{}
	for _, st := range got.GetNodeStatus().GetContainersStatuses() {
		byID[records.ContainerIDFromProto(st.GetContainerId())] = st
	}
	if len(byID) != 4 {
		t.Fatalf("%d statuses, want 4 (every container but the one already reported)", len(byID))
	}
	for _, c := range n.containers {
		id := c.id
		if c.reported(1) {
			continue
		}
		wantSt := &yarnpb.ContainerStatusProto{ContainerId: id.Proto(), State: c.state.Enum(), ExitStatus: proto.Int32(c.exit), Diagnostics: proto.String(c.diag)}
		if !proto.Equal(byID[id], wantSt) {
			t.Errorf("status of %s: %v, want %v", id, byID[id], wantSt)
		}
	}
	got.NodeStatus.ContainersStatuses = nil
	if !proto.Equal(&got, want) {
		t.Errorf("request %v, want %v", &got, want)
	}
	if fresh != 2 {
		t.Errorf("%d completed containers reported for the first time, want 2", fresh)
	}

	// Until heartbeat 2 is answered the next one carries them again; after, not.
	statuses := func(seq uint64) int {
		b, _, err := n.appendHeartbeatLocked(nil, now, seq)
		if err != nil {
			t.Fatal(err)
		}
		var req yarnpb.NodeHeartbeatRequestProto
		if err := proto.Unmarshal(b, &req); err != nil {
			t.Fatal(err)
		}
		return len(req.GetNodeStatus().GetContainersStatuses())
	}
	if got := statuses(3); got != 4 {
		t.Errorf("heartbeat 2 unanswered: %d statuses in the next, want 4", got)
	}
	n.answered = 3
	if got := statuses(4); got != 2 {
		t.Errorf("heartbeat 3 answered: %d statuses in the next, want 2 (the running ones)", got)
	}
}
