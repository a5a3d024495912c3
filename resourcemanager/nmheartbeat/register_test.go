package nmheartbeat

import (
	"testing"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
)

// registration is a node's registration after an RM restart as a 3.x NodeManager sends
// it: plain running and completed containers (2.x's fields and 3.x's), and ones protobuf
// must decode: allocation tags, a GPU in the resource, OPPORTUNISTIC, state NEW.
func registration(n int) *yarnpb.RegisterNodeManagerRequestProto {
	req := &yarnpb.RegisterNodeManagerRequestProto{NodeId: &yarnpb.NodeIdProto{Host: proto.String("host1"), Port: proto.Int32(8041)}, HttpPort: proto.Int32(8042),
		Resource: &yarnpb.ResourceProto{Memory: proto.Int64(8192), VirtualCores: proto.Int32(8)}, NmVersion: proto.String("3.1.1"),
		RunningApplications: []*yarnpb.ApplicationIdProto{cid(3, 1).Attempt.App.Proto()}}
	for i := range n {
		req.ContainerStatuses = append(req.ContainerStatuses, &yarnpb.NMContainerStatusProto{ContainerId: cid(int32(i%7+1), int64(i+2)).Proto(),
			ContainerState: yarnpb.ContainerStateProto_C_RUNNING.Enum(), Resource: &yarnpb.ResourceProto{Memory: proto.Int64(1024), VirtualCores: proto.Int32(1)},
			Priority: &yarnpb.PriorityProto{Priority: proto.Int32(20)}, Diagnostics: proto.String(""), ContainerExitStatus: proto.Int32(-1000),
			CreationTime: proto.Int64(1795740979941 + int64(i)), NodeLabelExpression: proto.String(""), Version: proto.Int32(0),
			ExecutionType: yarnpb.ExecutionTypeProto_GUARANTEED.Enum(), AllocationRequestId: proto.Int64(int64(i % 3))})
		if i == 1 {
			req.ContainerStatuses = append(req.ContainerStatuses,
				&yarnpb.NMContainerStatusProto{ContainerId: cid(9, 4).Proto(), ContainerState: yarnpb.ContainerStateProto_C_COMPLETE.Enum(),
					ContainerExitStatus: proto.Int32(-105), Diagnostics: proto.String("Container killed by the ApplicationMaster.")},
				&yarnpb.NMContainerStatusProto{ContainerId: cid(9, 5).Proto(), ContainerState: yarnpb.ContainerStateProto_C_RUNNING.Enum(), AllocationTags: []string{"hbase"}},
				&yarnpb.NMContainerStatusProto{ContainerId: cid(9, 6).Proto(), ContainerState: yarnpb.ContainerStateProto_C_RUNNING.Enum(),
					Resource: &yarnpb.ResourceProto{Memory: proto.Int64(1024), VirtualCores: proto.Int32(1), ResourceValueMap: []*yarnpb.ResourceInformationProto{{Key: proto.String("yarn.io/gpu"), Value: proto.Int64(1)}}}},
				&yarnpb.NMContainerStatusProto{ContainerId: cid(9, 7).Proto(), ContainerState: yarnpb.ContainerStateProto_C_RUNNING.Enum(), ExecutionType: yarnpb.ExecutionTypeProto_OPPORTUNISTIC.Enum()},
				&yarnpb.NMContainerStatusProto{ContainerId: cid(9, 8).Proto(), ContainerState: yarnpb.ContainerStateProto_C_NEW.Enum()})
		}
	}
	return req
}

func TestDecodeRegistrationTakesPlainStatuses(t *testing.T) {
	want := registration(4)
	b, err := proto.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := new(Decoder).DecodeRegistration(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Plain) != 5 || len(got.GetContainerStatuses()) != 4 {
		t.Fatalf("%d plain and %d statuses, want 5 (four running, one completed) and 4 (tags, a GPU, OPPORTUNISTIC, NEW)", len(got.Plain), len(got.GetContainerStatuses()))
	}
	if r := got.Plain[0]; r.ID != cid(1, 2) || r.State != yarnpb.ContainerStateProto_C_RUNNING || r.MemoryMB != 1024 || r.VCores != 1 || r.Priority != 20 ||
		r.Created != 1795740979941 || r.RequestID != 0 || r.Exit != -1000 || r.Diagnostics != "" {
		t.Errorf("a 3.x running status read as %+v", r)
	}
	if r := got.Plain[2]; r.ID != cid(9, 4) || r.State != yarnpb.ContainerStateProto_C_COMPLETE || r.Exit != -105 || r.RequestID != -1 || r.MemoryMB != 0 {
		t.Errorf("a 2.x completed status read as %+v", r)
	}
	checkSameRegistration(t, want, got)
}

// checkSameRegistration checks that got is want: the same request once the statuses are
// set aside, and want's statuses, read as the RM reads them, got's plain and protobuf
// ones in order.
func checkSameRegistration(t *testing.T, want *yarnpb.RegisterNodeManagerRequestProto, got Registration) {
	t.Helper()
	full, plain := got.GetContainerStatuses(), got.Plain
	for i, st := range want.GetContainerStatuses() {
		switch {
		case len(full) > 0 && proto.Equal(st, full[0]):
			full = full[1:]
		case len(plain) > 0 && len(st.ProtoReflect().GetUnknown()) == 0 && len(st.GetAllocationTags()) == 0 && len(st.GetResource().GetResourceValueMap()) == 0 &&
			ReportedOf(st) == plain[0]:
			plain = plain[1:]
		default:
			t.Fatalf("status %d %v is neither the next decoded status nor the next plain one (%+v)", i, st, plain)
		}
	}
	if len(full) > 0 || len(plain) > 0 {
		t.Fatalf("left over: statuses %v, plain %+v", full, plain)
	}
	a, b := proto.Clone(want).(*yarnpb.RegisterNodeManagerRequestProto), proto.Clone(got.RegisterNodeManagerRequestProto).(*yarnpb.RegisterNodeManagerRequestProto)
	a.ContainerStatuses, b.ContainerStatuses = nil, nil
	if !proto.Equal(a, b) {
		t.Fatalf("the rest of the request differs:\n%v\n%v", a, b)
	}
}

// FuzzDecodeRegistration: for any bytes, DecodeRegistration fails where proto.Unmarshal
// fails and otherwise gives the same request, its plain statuses apart.
func FuzzDecodeRegistration(f *testing.F) {
	for _, n := range []int{0, 1, 3} {
		b, _ := proto.Marshal(registration(n))
		f.Add(b)
	}
	twice, _ := proto.Marshal(registration(2))
	f.Add(append(append([]byte{}, twice...), twice...))
	// A status whose state comes twice (RUNNING, COMPLETE); one with an unknown state
	// after RUNNING; one whose resource comes twice (merged); a truncated one.
	f.Add([]byte{0x32, 0x06, 0x0a, 0x00, 0x10, 0x02, 0x10, 0x03})
	f.Add([]byte{0x32, 0x06, 0x0a, 0x00, 0x10, 0x02, 0x10, 0x63})
	f.Add([]byte{0x32, 0x0c, 0x0a, 0x00, 0x10, 0x02, 0x1a, 0x02, 0x08, 0x05, 0x1a, 0x02, 0x10, 0x07})
	f.Add([]byte{0x32, 0x04, 0x0a, 0x00, 0x10})
	var d Decoder
	f.Fuzz(func(t *testing.T, b []byte) {
		want := &yarnpb.RegisterNodeManagerRequestProto{}
		werr := proto.Unmarshal(b, want)
		got, gerr := d.DecodeRegistration(b)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("protobuf: %v, DecodeRegistration: %v", werr, gerr)
		}
		if werr == nil {
			checkSameRegistration(t, want, got)
		}
	})
}

func BenchmarkDecodeRegistration(b *testing.B) {
	raw, _ := proto.Marshal(registration(500))
	b.Run("protobuf", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := proto.Unmarshal(raw, &yarnpb.RegisterNodeManagerRequestProto{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("lean", func(b *testing.B) {
		var d Decoder
		b.ReportAllocs()
		for b.Loop() {
			if _, err := d.DecodeRegistration(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}
