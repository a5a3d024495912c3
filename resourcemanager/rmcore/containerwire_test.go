package rmcore

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/conf"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/yarn/security"
)

// The allocated containers written as bytes are exactly the marshalled ContainerProto
// (token included), for the default resource types and with an extra one, for small and
// large ids and a negative priority; and an answer's entry is the field of
// AllocateResponseProto that holds it.
func TestContainerWireIsTheMarshalledProto(t *testing.T) {
	for _, types := range []string{"", "yarn.io/gpu"} {
		c := conf.New()
		if types != "" {
			c.Set("yarn.resource-types", types)
		}
		clock := testutil.NewClock(time.UnixMilli(1795740979941))
		rm, err := New(Options{Conf: c, Logger: testutil.QuietLogger(), Now: clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		at := &rmstate.NodeAddr{Key: "worker-17.example.com:45454", ID: &yarnpb.NodeIdProto{Host: proto.String("worker-17.example.com"), Port: proto.Int32(45454)}, HTTP: "worker-17.example.com:8042"}
		for _, ctr := range []*rmstate.Container{
			{ID: records.ContainerID{Attempt: records.AttemptID{App: records.ApplicationID{ClusterTimestamp: 1795740979941, ID: 1}, Attempt: 1}, ID: 2},
				At: at, Priority: 20, Resource: scheduler.Resource{1024, 1, 0}, User: "alice", RequestID: -1},
			{ID: records.ContainerID{Attempt: records.AttemptID{App: records.ApplicationID{ClusterTimestamp: 1795740979941, ID: 123456}, Attempt: 3}, ID: 7<<40 | 999999},
				At: at, Priority: -1, Resource: scheduler.Resource{262144, 64, 4}, User: "a-rather-long-user-name-to-pass-one-hundred-and-twenty-eight-bytes", RequestID: 0},
			{ID: records.ContainerID{Attempt: records.AttemptID{App: records.ApplicationID{ClusterTimestamp: 1795740979941, ID: 3}, Attempt: 1}, ID: 4},
				At: at, Priority: 0, Resource: scheduler.Resource{1024, 1, 0}, User: "alice", RequestID: 7, Placement: &scheduler.Placement{RequestID: 7, Tags: []string{"hbase", "zk"}}},
		} {
			now := clock.Now()
			want, err := rm.containerProto(ctr, now)
			if err != nil {
				t.Fatal(err)
			}
			wantBytes, _ := proto.Marshal(want)
			if got := rm.appendContainer(nil, ctr, now); !bytes.Equal(got, wantBytes) {
				t.Fatalf("types %q, %v:\n got %x\nwant %x", types, ctr.ID, got, wantBytes)
			}
			wantEntry, _ := proto.Marshal(&yarnpb.AllocateResponseProto{AllocatedContainers: []*yarnpb.ContainerProto{want}})
			if got := rm.appendAllocated([]byte{}, ctr, now); !bytes.Equal(got, wantEntry) {
				t.Fatalf("types %q, %v: entry\n got %x\nwant %x", types, ctr.ID, got, wantEntry)
			}
			clock.Advance(time.Second)
		}
	}
}

func BenchmarkAllocatedContainer(b *testing.B) {
	rm, err := New(Options{Conf: conf.New(), Logger: testutil.QuietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	ctr := &rmstate.Container{ID: records.ContainerID{Attempt: records.AttemptID{App: records.ApplicationID{ClusterTimestamp: 1795740979941, ID: 17}, Attempt: 1}, ID: 2345},
		At:       &rmstate.NodeAddr{Key: "host-1:45454", ID: &yarnpb.NodeIdProto{Host: proto.String("host-1"), Port: proto.Int32(45454)}, HTTP: "host-1:8042"},
		Priority: 20, Resource: scheduler.Resource{1024, 1}, User: "alice"}
	now := time.Now()
	b.Run("proto", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c, _ := rm.containerProto(ctr, now)
			proto.Marshal(&yarnpb.AllocateResponseProto{AllocatedContainers: []*yarnpb.ContainerProto{c}})
		}
	})
	b.Run("wire", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 1024)
		for b.Loop() {
			buf = rm.appendAllocated(buf[:0], ctr, now)
		}
	})
}

// The NMTokens written as bytes are exactly the marshalled nm_tokens entries of the
// tokens security.NMTokens issues: for a short and a long host (lengths of one and two
// bytes), a node id carrying a field this RM does not know, and an empty submitter.
func TestNMTokenWireIsTheMarshalledProto(t *testing.T) {
	rm, err := New(Options{Conf: conf.New(), Logger: testutil.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	withUnknown := &yarnpb.NodeIdProto{Host: proto.String("host-2"), Port: proto.Int32(8041)}
	withUnknown.ProtoReflect().SetUnknown([]byte{0x18, 0x07}) // field 3, varint 7
	nodes := []*yarnpb.NodeIdProto{
		{Host: proto.String("worker-17.example.com"), Port: proto.Int32(45454)},
		{Host: proto.String(strings.Repeat("very-long-rack-and-host-name.", 6) + "example.com"), Port: proto.Int32(1)},
		withUnknown,
	}
	att := records.AttemptID{App: records.ApplicationID{ClusterTimestamp: 1795740979941, ID: 123456}, Attempt: 3}
	for _, user := range []string{"alice", ""} {
		var want []*yarnpb.NMTokenProto
		for _, n := range nodes {
			tok, err := security.NMTokens{Keys: rm.nmKeys}.Issue(att, n, user)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, &yarnpb.NMTokenProto{NodeId: n, Token: tok.Proto()})
		}
		wantBytes, _ := proto.Marshal(&yarnpb.AllocateResponseProto{NmTokens: want})
		if got := rm.AppendNMTokens([]byte{}, att, user, nodes); !bytes.Equal(got, wantBytes) {
			t.Fatalf("user %q:\n got %x\nwant %x", user, got, wantBytes)
		}
	}
	if got := rm.AppendNMTokens(nil, att, "alice", nil); len(got) != 0 {
		t.Fatalf("no nodes wrote %x", got)
	}
}

func BenchmarkNMToken(b *testing.B) {
	rm, err := New(Options{Conf: conf.New(), Logger: testutil.QuietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	att := records.AttemptID{App: records.ApplicationID{ClusterTimestamp: 1795740979941, ID: 17}, Attempt: 1}
	node := &yarnpb.NodeIdProto{Host: proto.String("host-1"), Port: proto.Int32(45454)}
	b.Run("proto", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			tok, _ := security.NMTokens{Keys: rm.nmKeys}.Issue(att, node, "alice")
			proto.Marshal(&yarnpb.AllocateResponseProto{NmTokens: []*yarnpb.NMTokenProto{{NodeId: node, Token: tok.Proto()}}})
		}
	})
	b.Run("wire", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 1024)
		nodes := []*yarnpb.NodeIdProto{node}
		for b.Loop() {
			buf = rm.AppendNMTokens(buf[:0], att, "alice", nodes)
		}
	})
}
