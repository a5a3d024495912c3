package nmsim

import (
	"time"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/wire"
)

// Field numbers of the messages a heartbeat's request is written with.
const (
	requestNodeStatus   = 1 // NodeHeartbeatRequestProto.node_status
	nodeStatusContainer = 3 // NodeStatusProto.containersStatuses
	statusID            = 1 // ContainerStatusProto.container_id
	statusState         = 2
	statusDiagnostics   = 3
	statusExit          = 4
)

// appendHeartbeatLocked appends the bytes of the heartbeat's NodeHeartbeatRequestProto —
// the node's status with a status for each container, as a Java NM reports them — and
// returns how many completed containers it reports for the first time; seq numbers
// the heartbeat (see simContainer.reportedIn); n.mu is held.
//
// A load generator's NMs repeat tens of thousands of running containers' statuses every
// second: building a message per status cost the generator a tenth of its CPU, which
// it shares with the RM it measures, so the statuses are written as bytes (what
// proto.Marshal writes for them) and only the small rest is marshalled.
func (n *NodeManager) appendHeartbeatLocked(b []byte, now time.Time, seq uint64) ([]byte, int, error) {
	st := &yarnpb.NodeStatusProto{NodeId: n.nodeID, ResponseId: proto.Int32(n.responseID),
		NodeHealthStatus: &yarnpb.NodeHealthStatusProto{IsNodeHealthy: proto.Bool(true), HealthReport: proto.String(""), LastHealthReportTime: proto.Int64(now.UnixMilli())}}
	head, err := proto.Marshal(st)
	if err != nil {
		return nil, 0, err
	}
	fresh := 0
	nowNS := now.UnixNano()
	b, _ = wire.AppendMessage(b, requestNodeStatus, func(b []byte) []byte {
		b = append(b, head...)
		for i := range n.containers {
			c := &n.containers[i]
			c.endIfDue(nowNS)
			if c.state == yarnpb.ContainerStateProto_C_COMPLETE {
				if c.reported(n.answered) {
					continue
				}
				if c.reportedIn == 0 {
					fresh++
				}
				c.reportedIn = seq
			}
			b, _ = wire.AppendMessage(b, nodeStatusContainer, c.appendStatus)
		}
		return b
	})
	req := &yarnpb.NodeHeartbeatRequestProto{}
	req.LastKnownContainerTokenMasterKey, req.LastKnownNmTokenMasterKey = n.keys.LastKnown()
	b, err = proto.MarshalOptions{}.MarshalAppend(b, req)
	return b, fresh, err
}

// appendStatus appends the fields of c's ContainerStatusProto.
func (c *simContainer) appendStatus(b []byte) []byte {
	b, _ = wire.AppendMessage(b, statusID, c.id.AppendProto)
	b = wire.AppendInt32(b, statusState, int32(c.state))
	b = wire.AppendString(b, statusDiagnostics, c.diag)
	return wire.AppendInt32(b, statusExit, c.exit)
}
