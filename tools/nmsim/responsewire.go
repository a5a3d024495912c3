package nmsim

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/wire"
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
	var removed []records.ContainerID
	rest := wire.AppendWithout(nil, b, func(num protowire.Number, v []byte) bool {
		var id records.ContainerID
		if num != respRemoved || !id.MergeWire(v) {
			return false
		}
		removed = append(removed, id)
		return true
	})
	if err := proto.Unmarshal(rest, resp); err != nil {
		return nil, fmt.Errorf("decode heartbeat response: %w", err)
	}
	return removed, nil
}
