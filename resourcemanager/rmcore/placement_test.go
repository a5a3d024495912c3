package rmcore

import (
	"testing"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
)

// A constraint IN a node partition names the partition the request is scheduled in (no
// value: the default partition); NOTIN names none.
func TestPartitionOfConstraint(t *testing.T) {
	partition := func(min, max int32, values ...string) *yarnpb.PlacementConstraintProto {
		return &yarnpb.PlacementConstraintProto{SimpleConstraint: &yarnpb.SimplePlacementConstraintProto{Scope: proto.String("node"),
			TargetExpressions: []*yarnpb.PlacementConstraintTargetProto{{TargetType: yarnpb.PlacementConstraintTargetProto_NODE_ATTRIBUTE.Enum(),
				TargetKey: proto.String(nodePartitionKey), TargetValues: values}}, MinCardinality: proto.Int32(min), MaxCardinality: proto.Int32(max)}}
	}
	and := func(cs ...*yarnpb.PlacementConstraintProto) *yarnpb.PlacementConstraintProto {
		return &yarnpb.PlacementConstraintProto{CompositeConstraint: &yarnpb.CompositePlacementConstraintProto{
			CompositeType: yarnpb.CompositePlacementConstraintProto_AND.Enum(), ChildConstraints: cs}}
	}
	rm := &Core{}
	for name, tc := range map[string]struct {
		c    *yarnpb.PlacementConstraintProto
		want string
		ok   bool
	}{
		"in gpu":        {partition(1, 1<<31-1, "gpu"), "gpu", true},
		"in default":    {partition(1, 1<<31-1), "", true},
		"not in gpu":    {partition(0, 0, "gpu"), "", false},
		"and with gpu":  {and(partition(0, 0, "x"), partition(1, 1<<31-1, "gpu")), "gpu", true},
		"no constraint": {nil, "", false},
	} {
		c, err := rm.constraintFrom(tc.c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, ok := partitionOf(c); got != tc.want || ok != tc.ok {
			t.Errorf("%s: partition %q %v, want %q %v", name, got, ok, tc.want, tc.ok)
		}
	}
}
