package nmsim

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
)

// respRemoved is NodeHeartbeatResponseProto.containers_to_be_removed_from_nm.
const respRemoved = 9

// decodeHeartbeatResponse decodes a NodeHeartbeatResponseProto's bytes into resp, except
// the containers the node may forget, which it returns as ids: at a busy RM's pace a
// simulated node hears of a hundred a second, and as messages each was three allocations
// and the largest share of the generator's decoding. An entry not plainly encoded is left
// to protobuf, and so is in resp.
func decodeHeartbeatResponse(b []byte, resp *yarnpb.NodeHeartbeatResponseProto) ([]records.ContainerID, error) {
	var (
		removed []records.ContainerID
		rest    []byte
		copied  int
	)
	for off := 0; off < len(b); {
		num, typ, n := protowire.ConsumeTag(b[off:])
		if n < 0 {
			break // protobuf reports it below
		}
		m := protowire.ConsumeFieldValue(num, typ, b[off+n:])
		if m < 0 {
			break
		}
		if num == respRemoved && typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(b[off+n:])
			var id records.ContainerID
			if id.MergeWire(v) {
				removed = append(removed, id)
				if rest == nil {
					rest = make([]byte, 0, len(b)/4)
				}
				rest = append(rest, b[copied:off]...)
				copied = off + n + m
			}
		}
		off += n + m
	}
	if rest == nil {
		rest = b
	} else {
		rest = append(rest, b[copied:]...)
	}
	if err := proto.Unmarshal(rest, resp); err != nil {
		return nil, fmt.Errorf("decode heartbeat response: %w", err)
	}
	return removed, nil
}
