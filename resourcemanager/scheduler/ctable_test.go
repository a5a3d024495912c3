package scheduler

import (
	"math/rand/v2"
	"testing"
)

// The paged table answers as a map would over a long run of sequential ids with random
// releases, and holds pages only around live ids.
func TestContainerTableMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var tab containerTable
	ref := map[ContainerID]*container{}
	next := ContainerID(1)
	for step := 0; step < 200000; step++ {
		if r.IntN(3) > 0 || len(ref) == 0 {
			c := &container{id: next}
			next++
			tab.put(c)
			ref[c.id] = c
		} else {
			// Release mostly old containers, as long-running RMs do.
			for id := range ref {
				tab.del(id)
				delete(ref, id)
				break
			}
		}
		if step%997 == 0 {
			for id := next - 5000; id < next; id++ {
				got, ok := tab.get(id)
				want, wok := ref[id]
				if ok != wok || got != want {
					t.Fatalf("step %d id %d: %v %v, want %v %v", step, id, got, ok, want, wok)
				}
			}
			if tab.len() != len(ref) {
				t.Fatalf("len %d, want %d", tab.len(), len(ref))
			}
		}
	}
	// Release everything: the table shrinks to its last page.
	for id := range ref {
		tab.del(id)
	}
	if tab.len() != 0 || len(tab.pages) != 1 {
		t.Fatalf("after releasing all: %d live, %d pages", tab.len(), len(tab.pages))
	}
	if _, ok := tab.get(0); ok {
		t.Fatal("id 0 found")
	}
	tab.del(12345678) // unknown ids are ignored
}
