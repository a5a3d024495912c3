package amclient

import (
	"fmt"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc/token"
)

func sampleResponse() *yarnpb.AllocateResponseProto {
	ctr := func(id int64, host string, port int32) *yarnpb.ContainerProto {
		cid := records.ContainerID{Attempt: records.AttemptID{App: records.ApplicationID{ClusterTimestamp: 1700000000000, ID: 7}, Attempt: 1}, ID: id}
		return &yarnpb.ContainerProto{Id: cid.Proto(), NodeId: &yarnpb.NodeIdProto{Host: proto.String(host), Port: proto.Int32(port)},
			NodeHttpAddress: proto.String(host + ":8042"), Resource: &yarnpb.ResourceProto{Memory: proto.Int64(1024), VirtualCores: proto.Int32(1)},
			Priority: &yarnpb.PriorityProto{Priority: proto.Int32(3)}, ExecutionType: yarnpb.ExecutionTypeProto_GUARANTEED.Enum(),
			ContainerToken: &commonpb.TokenProto{Identifier: []byte("ident"), Password: []byte("pw"), Kind: proto.String("ContainerToken"), Service: proto.String(host + ":45454")}}
	}
	withType := ctr(3, "h3", 3)
	withType.Resource.ResourceValueMap = []*yarnpb.ResourceInformationProto{{Key: proto.String("yarn.io/gpu"), Value: proto.Int64(1)}}
	return &yarnpb.AllocateResponseProto{ResponseId: proto.Int32(4), NumClusterNodes: proto.Int32(2),
		AllocatedContainers:        []*yarnpb.ContainerProto{ctr(1, "h1", 1), ctr(1<<40|2, "h2", 2), withType},
		CompletedContainerStatuses: []*yarnpb.ContainerStatusProto{{ContainerId: ctr(9, "h1", 1).Id, State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(), ExitStatus: proto.Int32(0)}},
		NmTokens: []*yarnpb.NMTokenProto{
			{NodeId: &yarnpb.NodeIdProto{Host: proto.String("h1"), Port: proto.Int32(1)}, Token: &commonpb.TokenProto{Identifier: []byte("nm1"), Password: []byte("pw1"), Kind: proto.String("NMToken"), Service: proto.String("h1:1")}},
			{NodeId: &yarnpb.NodeIdProto{Host: proto.String("h2"), Port: proto.Int32(2)}, Token: &commonpb.TokenProto{Identifier: []byte("nm2"), Password: []byte{}, Kind: proto.String("NMToken"), Service: proto.String("")}},
		}}
}

// The granted containers read from the bytes are the ones protobuf decodes, and the rest
// of the answer is what protobuf gives; a container with another resource type is left to
// protobuf.
func TestDecodeGrantedReadsWhatProtobufReads(t *testing.T) {
	want := sampleResponse()
	b, err := proto.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var got yarnpb.AllocateResponseProto
	granted, completed, tokens, err := decodeGranted(b, &got)
	if err != nil {
		t.Fatal(err)
	}
	sameMultiset(t, "NMTokens", tokens, want.NmTokens, tokenFromProto)
	if len(got.NmTokens) != 0 {
		t.Errorf("NMTokens left in the response: %v", got.NmTokens)
	}
	// The container with a GPU is decoded by protobuf, and comes last.
	var wantGranted []Granted
	for _, c := range want.AllocatedContainers {
		wantGranted = append(wantGranted, grantedFromProto(c))
	}
	if !slices.Equal(granted, wantGranted) || len(got.AllocatedContainers) != 0 {
		t.Errorf("granted %+v (and %v in the response), want %+v", granted, got.AllocatedContainers, wantGranted)
	}
	wantCompleted := []Completed{{ID: records.ContainerIDFromProto(want.CompletedContainerStatuses[0].GetContainerId()), ExitStatus: 0, Diagnostics: "N/A"}}
	if !slices.Equal(completed, wantCompleted) || len(got.CompletedContainerStatuses) != 0 {
		t.Errorf("completed %+v (and %v in the response), want %+v", completed, got.CompletedContainerStatuses, wantCompleted)
	}
	got.AllocatedContainers, want.AllocatedContainers = nil, nil
	want.CompletedContainerStatuses, want.NmTokens = nil, nil
	if !proto.Equal(&got, want) {
		t.Errorf("rest %v, want %v", &got, want)
	}
}

// FuzzDecodeGranted: for any bytes, decodeGranted fails where proto.Unmarshal fails, and
// otherwise gives the same answer, its allocated containers split between Granted and the
// response.
func FuzzDecodeGranted(f *testing.F) {
	b, _ := proto.Marshal(sampleResponse())
	f.Add(b)
	f.Add([]byte{0x1a, 0x02, 0x0a, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		var lean, full yarnpb.AllocateResponseProto
		granted, completed, tokens, err := decodeGranted(b, &lean)
		ferr := proto.Unmarshal(b, &full)
		if (err == nil) != (ferr == nil) {
			t.Fatalf("decodeGranted error %v, proto.Unmarshal error %v", err, ferr)
		}
		if err != nil {
			return
		}
		// The same containers and statuses, as multisets (those protobuf decoded come
		// after the others).
		sameMultiset(t, "containers", granted, full.AllocatedContainers, grantedFromProto)
		sameMultiset(t, "completed", completed, full.CompletedContainerStatuses, completedFromProto)
		// The NMTokens read from the bytes and those left to protobuf are protobuf's.
		for _, nt := range lean.NmTokens {
			tokens = append(tokens, tokenFromProto(nt))
		}
		sameMultiset(t, "NMTokens", tokens, full.NmTokens, tokenFromProto)
		lean.NmTokens, full.NmTokens = nil, nil
		if len(lean.AllocatedContainers)+len(lean.CompletedContainerStatuses) > 0 {
			t.Fatalf("containers or statuses left in the response: %v", &lean)
		}
		full.AllocatedContainers, full.CompletedContainerStatuses = nil, nil
		if !proto.Equal(&lean, &full) {
			t.Fatalf("rest %v, protobuf %v", &lean, &full)
		}
	})
}

// tokenFromProto is an NMTokenProto as the client keeps it.
func tokenFromProto(t *yarnpb.NMTokenProto) nodeToken {
	return nodeToken{node: fmt.Sprintf("%s:%d", t.GetNodeId().GetHost(), t.GetNodeId().GetPort()), token: token.FromProto(t.GetToken())}
}

// String shows the token's fields, not its address (sameMultiset compares strings).
func (t nodeToken) String() string {
	if t.token == nil {
		return t.node + " <nil>"
	}
	return fmt.Sprintf("%s %q %q %q %q", t.node, t.token.Identifier, t.token.Password, t.token.Kind, t.token.Service)
}

// sameMultiset fails t unless got holds the values of want (converted), in any order.
func sameMultiset[V any, M any](t *testing.T, what string, got []V, want []M, convert func(M) V) {
	t.Helper()
	var g, w []string
	for _, v := range got {
		g = append(g, fmt.Sprintf("%+v", v))
	}
	for _, m := range want {
		w = append(w, fmt.Sprintf("%+v", convert(m)))
	}
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		t.Fatalf("%s %v, protobuf has %v", what, g, w)
	}
}
