package scheduler

import (
	"fmt"
	"slices"
	"testing"
)

// ReleaseAll moves each node in the placement index once for all its containers; the
// engine must then place exactly as after releasing them one by one.
func TestReleaseAllPlacesAsReleasesOneByOne(t *testing.T) {
	for _, strategy := range []string{"rings", "balance", "first-fit"} {
		t.Run(strategy, func(t *testing.T) {
			build := func() (*Engine, []Allocation) {
				e := newEngine(t, strategy, queues(t, "root.queues", "a", "root.a.capacity", "100"))
				for i := range 12 {
					must(t, e.AddNode(NodeSpec{ID: fmt.Sprintf("n%02d:8041", i), Capacity: res(int64(8192+1024*(i%3)), 8)}))
				}
				must(t, e.AddApp(AppSpec{ID: "app", Queue: "a", Submit: t0}))
				must(t, e.UpdateAsks("app", []Ask{{Priority: 1, ResourceName: "*", Capability: res(1024, 1), Count: 60}}))
				return e, deliver(e, e.Schedule(0)).Allocations
			}
			one, placed := build()
			all, placedAll := build()
			if !slices.Equal(placed, placedAll) {
				t.Fatal("the two engines placed differently before any release")
			}
			// Every third container, grouped by node as heartbeats report them.
			byNode := map[string][]ContainerID{}
			var order []string
			for i, a := range placed {
				if i%3 != 0 {
					continue
				}
				if byNode[a.Node] == nil {
					order = append(order, a.Node)
				}
				byNode[a.Node] = append(byNode[a.Node], a.Container)
			}
			for _, n := range order {
				for _, id := range byNode[n] {
					must(t, one.Release(id))
				}
				all.ReleaseAll(byNode[n])
			}
			for _, e := range []*Engine{one, all} {
				must(t, e.UpdateAsks("app", []Ask{{Priority: 1, ResourceName: "*", Capability: res(2048, 1), Count: 30}}))
			}
			got, want := all.Schedule(0).Allocations, one.Schedule(0).Allocations
			if len(want) == 0 || !slices.Equal(got, want) {
				t.Fatalf("after ReleaseAll: %v\none by one: %v", got, want)
			}
		})
	}
}
