package nmsim

import (
	"maps"
	"testing"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
)

// The containers to forget read from the bytes are the ones protobuf decodes (an entry
// protobuf would read differently, here one with a field it keeps as unknown, stays in
// the message), and the rest of the answer is what protobuf gives.
func TestDecodeHeartbeatResponseReadsWhatProtobufReads(t *testing.T) {
	att := records.AttemptID{App: records.ApplicationID{ClusterTimestamp: 1795740979941, ID: 3}, Attempt: 1}
	odd := records.ContainerID{Attempt: att, ID: 99}.Proto()
	odd.ProtoReflect().SetUnknown([]byte{0x30, 0x01}) // field 6, varint 1
	want := &yarnpb.NodeHeartbeatResponseProto{
		ResponseId: proto.Int32(7), NodeAction: yarnpb.NodeActionProto_NORMAL.Enum(), NextHeartBeatInterval: proto.Int64(1000),
		ContainersToCleanup:         []*yarnpb.ContainerIdProto{records.ContainerID{Attempt: att, ID: 5}.Proto()},
		ContainersToBeRemovedFromNm: []*yarnpb.ContainerIdProto{records.ContainerID{Attempt: att, ID: 2}.Proto(), odd, records.ContainerID{Attempt: att, ID: 1<<40 | 3}.Proto()},
		ApplicationsToCleanup:       []*yarnpb.ApplicationIdProto{att.App.Proto()},
	}
	b, err := proto.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var got yarnpb.NodeHeartbeatResponseProto
	removed, err := decodeHeartbeatResponse(b, &got)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 2 || removed[0] != (records.ContainerID{Attempt: att, ID: 2}) || removed[1] != (records.ContainerID{Attempt: att, ID: 1<<40 | 3}) {
		t.Fatalf("removed %v", removed)
	}
	if len(got.ContainersToBeRemovedFromNm) != 1 || !proto.Equal(got.ContainersToBeRemovedFromNm[0], odd) {
		t.Fatalf("left to protobuf: %v", got.ContainersToBeRemovedFromNm)
	}
	got.ContainersToBeRemovedFromNm = want.ContainersToBeRemovedFromNm
	if !proto.Equal(&got, want) {
		t.Fatalf("rest of the answer:\n got %v\nwant %v", &got, want)
	}
	if _, err := decodeHeartbeatResponse([]byte{0x0a, 0x05, 0x01}, &got); err == nil {
		t.Fatal("a truncated answer decoded")
	}
}

// FuzzDecodeHeartbeatResponse: for any bytes, decodeHeartbeatResponse fails where
// proto.Unmarshal fails, and otherwise gives protobuf's answer, its containers to forget
// split between the ids and the message.
func FuzzDecodeHeartbeatResponse(f *testing.F) {
	att := records.AttemptID{App: records.ApplicationID{ClusterTimestamp: 1795740979941, ID: 3}, Attempt: 1}
	b, _ := proto.Marshal(&yarnpb.NodeHeartbeatResponseProto{ResponseId: proto.Int32(7),
		ContainersToBeRemovedFromNm: []*yarnpb.ContainerIdProto{records.ContainerID{Attempt: att, ID: 2}.Proto()}})
	f.Add(b)
	f.Add([]byte{0x4a, 0x02, 0x18, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		var lean, full yarnpb.NodeHeartbeatResponseProto
		removed, err := decodeHeartbeatResponse(b, &lean)
		ferr := proto.Unmarshal(b, &full)
		if (err == nil) != (ferr == nil) {
			t.Fatalf("decodeHeartbeatResponse error %v, proto.Unmarshal error %v", err, ferr)
		}
		if err != nil {
			return
		}
		got := map[records.ContainerID]int{}
		for _, id := range removed {
			got[id]++
		}
		for _, id := range lean.ContainersToBeRemovedFromNm {
			got[records.ContainerIDFromProto(id)]++
		}
		want := map[records.ContainerID]int{}
		for _, id := range full.ContainersToBeRemovedFromNm {
			want[records.ContainerIDFromProto(id)]++
		}
		if !maps.Equal(got, want) {
			t.Fatalf("containers to forget %v, protobuf %v", got, want)
		}
		lean.ContainersToBeRemovedFromNm, full.ContainersToBeRemovedFromNm = nil, nil
		if !proto.Equal(&lean, &full) {
			t.Fatalf("rest %v, protobuf %v", &lean, &full)
		}
	})
}
