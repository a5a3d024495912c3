package nmheartbeat

import (
	"testing"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
)

func cid(app int32, n int64) records.ContainerID {
	return records.ContainerID{Attempt: records.AttemptID{App: records.ApplicationID{ClusterTimestamp: 1795740979941, ID: app}, Attempt: 1}, ID: n}
}

// heartbeat is a node's heartbeat as a 3.1.1 NodeManager sends it: running containers
// (with sub-state and execution type), a completed one, one starting, one carrying its
// capability, completed ones (2.x's, 3.x's with the sub-state DONE, and one with an
// execution type), and the other fields of the request.
func heartbeat(running int) *yarnpb.NodeHeartbeatRequestProto {
	st := &yarnpb.NodeStatusProto{NodeId: &yarnpb.NodeIdProto{Host: proto.String("host1"), Port: proto.Int32(8041)}, ResponseId: proto.Int32(5),
		NodeHealthStatus:      &yarnpb.NodeHealthStatusProto{IsNodeHealthy: proto.Bool(true), HealthReport: proto.String(""), LastHealthReportTime: proto.Int64(1)},
		KeepAliveApplications: []*yarnpb.ApplicationIdProto{cid(3, 1).Attempt.App.Proto()}}
	for i := range running {
		st.ContainersStatuses = append(st.ContainersStatuses, &yarnpb.ContainerStatusProto{ContainerId: cid(int32(i%7+1), int64(i+2)).Proto(),
			State: yarnpb.ContainerStateProto_C_RUNNING.Enum(), ExitStatus: proto.Int32(-1000), Diagnostics: proto.String(""),
			ExecutionType: yarnpb.ExecutionTypeProto_GUARANTEED.Enum(), ContainerSubState: yarnpb.ContainerSubStateProto_CSS_RUNNING.Enum()})
		if i == 2 {
			st.ContainersStatuses = append(st.ContainersStatuses,
				&yarnpb.ContainerStatusProto{ContainerId: cid(9, 4).Proto(), State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(), ExitStatus: proto.Int32(0), Diagnostics: proto.String("done")},
				&yarnpb.ContainerStatusProto{ContainerId: cid(9, 7).Proto(), State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(), ExitStatus: proto.Int32(-105), Diagnostics: proto.String("Container killed by the ApplicationMaster."),
					ContainerSubState: yarnpb.ContainerSubStateProto_CSS_DONE.Enum()},
				&yarnpb.ContainerStatusProto{ContainerId: cid(9, 8).Proto(), State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(), ExitStatus: proto.Int32(1),
					ExecutionType: yarnpb.ExecutionTypeProto_GUARANTEED.Enum(), ContainerSubState: yarnpb.ContainerSubStateProto_CSS_DONE.Enum()},
				&yarnpb.ContainerStatusProto{ContainerId: cid(9, 5).Proto(), State: yarnpb.ContainerStateProto_C_NEW.Enum()},
				&yarnpb.ContainerStatusProto{ContainerId: cid(9, 6).Proto(), State: yarnpb.ContainerStateProto_C_RUNNING.Enum(),
					Capability: &yarnpb.ResourceProto{Memory: proto.Int64(1024), VirtualCores: proto.Int32(1)}})
		}
	}
	return &yarnpb.NodeHeartbeatRequestProto{NodeStatus: st, LastKnownContainerTokenMasterKey: &yarnpb.MasterKeyProto{KeyId: proto.Int32(7), Bytes: []byte("k")},
		TokenSequenceNo: proto.Int64(3)}
}

func TestDecodeTakesPlainRunningStatusesById(t *testing.T) {
	want := heartbeat(5)
	b, err := proto.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := new(Decoder).Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Running) != 5 || len(got.Completed) != 2 || len(got.GetNodeStatus().GetContainersStatuses()) != 3 {
		t.Fatalf("%d running ids, %d completed and %d statuses, want 5, 2 and 3 (new, running with a capability, completed with an execution type)",
			len(got.Running), len(got.Completed), len(got.GetNodeStatus().GetContainersStatuses()))
	}
	if d := got.Completed[1]; d.ID != cid(9, 7) || d.Exit != -105 || d.Diagnostics != "Container killed by the ApplicationMaster." || !d.SubStateDone {
		t.Fatalf("3.x's completed status read as %+v", d)
	}
	checkSame(t, want, got)
}

// checkSame checks that got is want: the same request once the statuses are set aside,
// want's statuses are got's in order with the running ones' ids in Running and the
// completed ones in Completed, each in order.
func checkSame(t *testing.T, want *yarnpb.NodeHeartbeatRequestProto, got Request) {
	t.Helper()
	full, running, completed := got.GetNodeStatus().GetContainersStatuses(), got.Running, got.Completed
	for i, st := range want.GetNodeStatus().GetContainersStatuses() {
		plain := len(st.ProtoReflect().GetUnknown()) == 0 && st.Capability == nil && len(st.ContainerAttributes) == 0
		switch {
		case len(full) > 0 && proto.Equal(st, full[0]):
			full = full[1:]
		case len(running) > 0 && plain && st.GetState() == yarnpb.ContainerStateProto_C_RUNNING && records.ContainerIDFromProto(st.GetContainerId()) == running[0]:
			running = running[1:]
		case len(completed) > 0 && plain && st.GetState() == yarnpb.ContainerStateProto_C_COMPLETE && st.ExecutionType == nil &&
			completed[0] == Done{ID: records.ContainerIDFromProto(st.GetContainerId()), Exit: st.GetExitStatus(), Diagnostics: st.GetDiagnostics(),
				SubStateDone: st.ContainerSubState != nil && st.GetContainerSubState() == yarnpb.ContainerSubStateProto_CSS_DONE} &&
			(st.ContainerSubState == nil || st.GetContainerSubState() == yarnpb.ContainerSubStateProto_CSS_DONE):
			completed = completed[1:]
		default:
			t.Fatalf("status %d %v is neither the next decoded status, nor the next running id (%v), nor the next completed (%v)", i, st, running, completed)
		}
	}
	if len(full) > 0 || len(running) > 0 || len(completed) > 0 {
		t.Fatalf("left over: statuses %v, running ids %v, completed %v", full, running, completed)
	}
	a, b := proto.Clone(want).(*yarnpb.NodeHeartbeatRequestProto), proto.Clone(got.NodeHeartbeatRequestProto).(*yarnpb.NodeHeartbeatRequestProto)
	if a.NodeStatus != nil {
		a.NodeStatus.ContainersStatuses = nil
	}
	if b.NodeStatus != nil {
		b.NodeStatus.ContainersStatuses = nil
	}
	if !proto.Equal(a, b) {
		t.Fatalf("the rest of the request differs:\n%v\n%v", a, b)
	}
}

// FuzzDecode: for any bytes, Decode fails where proto.Unmarshal fails and otherwise
// gives the same request, plain running statuses by id and plain completed ones apart.
func FuzzDecode(f *testing.F) {
	for _, n := range []int{0, 1, 4} {
		b, _ := proto.Marshal(heartbeat(n))
		f.Add(b)
	}
	// Two node statuses (protobuf merges them), a status whose state comes twice, and one
	// with an unknown state after RUNNING.
	twice, _ := proto.Marshal(heartbeat(2))
	f.Add(append(append([]byte{}, twice...), twice...))
	f.Add([]byte{0x0a, 0x0c, 0x1a, 0x0a, 0x0a, 0x04, 0x12, 0x02, 0x10, 0x01, 0x10, 0x02, 0x10, 0x03})
	f.Add([]byte{0x0a, 0x08, 0x1a, 0x06, 0x0a, 0x00, 0x10, 0x02, 0x10, 0x63})
	f.Add([]byte{0x0a, 0x04, 0x1a, 0x02, 0x10})
	// A completed status whose sub-state comes twice (DONE, then another), and one whose
	// exit status is a 10-byte negative varint.
	f.Add([]byte{0x0a, 0x0c, 0x1a, 0x0a, 0x0a, 0x00, 0x10, 0x03, 0x40, 0x05, 0x40, 0x01, 0x18, 0x00})
	f.Add([]byte{0x0a, 0x11, 0x1a, 0x0f, 0x0a, 0x00, 0x10, 0x03, 0x20, 0x97, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	var d Decoder
	f.Fuzz(func(t *testing.T, b []byte) {
		want := &yarnpb.NodeHeartbeatRequestProto{}
		werr := proto.Unmarshal(b, want)
		got, gerr := d.Decode(b)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("protobuf: %v, Decode: %v", werr, gerr)
		}
		if werr == nil {
			checkSame(t, want, got)
		}
	})
}

func BenchmarkDecodeHeartbeat(b *testing.B) {
	raw, _ := proto.Marshal(heartbeat(65))
	b.Run("protobuf", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := proto.Unmarshal(raw, &yarnpb.NodeHeartbeatRequestProto{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("lean", func(b *testing.B) {
		var d Decoder
		b.ReportAllocs()
		for b.Loop() {
			if _, err := d.Decode(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}
