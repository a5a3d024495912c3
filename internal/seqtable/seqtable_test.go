package seqtable

import (
	"math/rand/v2"
	"testing"
)

// The table answers as a map would over a long run of sequential ids with random
// deletions, and holds pages only around live ids.
func TestTableMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var tab Table[int]
	ref := map[int64]*int{}
	next := int64(1)
	for step := 0; step < 200000; step++ {
		if r.IntN(3) > 0 || len(ref) == 0 {
			v := new(int)
			tab.Put(next, v)
			ref[next] = v
			next++
		} else {
			// Delete mostly old ids, as a long-running RM's containers end.
			for id := range ref {
				tab.Delete(id)
				delete(ref, id)
				break
			}
		}
		if step%997 == 0 {
			for id := next - 5000; id < next; id++ {
				if got, want := tab.Get(id), ref[id]; got != want {
					t.Fatalf("step %d id %d: %p, want %p", step, id, got, want)
				}
			}
			if tab.Len() != len(ref) {
				t.Fatalf("len %d, want %d", tab.Len(), len(ref))
			}
		}
	}
	if held, most := tab.pagesHeld(), len(ref)+1; held > most {
		t.Fatalf("%d pages held for %d live ids", held, len(ref))
	}
	// Delete everything: the table shrinks to its last page.
	for id := range ref {
		tab.Delete(id)
	}
	if tab.Len() != 0 || len(tab.pages) != 1 {
		t.Fatalf("after deleting all: %d live, %d pages", tab.Len(), len(tab.pages))
	}
	if tab.Get(0) != nil {
		t.Fatal("id 0 found")
	}
	tab.Delete(12345678) // unknown ids are ignored
}

// Ids out of sequence — before the live range (containers recovered in any order),
// negative, or far beyond it (a made-up number) — are held too, and a far one costs no
// array of pages to reach it.
func TestTableOutOfSequence(t *testing.T) {
	var tab Table[string]
	a, b, c, d, e := "a", "b", "c", "d", "e"
	tab.Put(5000, &a)
	tab.Put(3, &b)          // before: pages grow at the front
	tab.Put(-700, &c)       // negative
	tab.Put(1<<39, &d)      // far beyond
	tab.Put(-(1 << 40), &e) // far before
	for id, want := range map[int64]*string{5000: &a, 3: &b, -700: &c, 1 << 39: &d, -(1 << 40): &e} {
		if got := tab.Get(id); got != want {
			t.Errorf("Get(%d) = %v, want %v", id, got, want)
		}
	}
	if len(tab.pages) > 100 || len(tab.far) != 2 || tab.Len() != 5 {
		t.Fatalf("%d pages, %d far, %d live", len(tab.pages), len(tab.far), tab.Len())
	}
	tab.Put(3, &a) // replacing keeps the count
	if tab.Len() != 5 || tab.Get(3) != &a {
		t.Fatalf("after replacing: %d live, Get(3) = %v", tab.Len(), tab.Get(3))
	}
	for _, id := range []int64{5000, 3, -700, 1 << 39, -(1 << 40)} {
		tab.Delete(id)
	}
	if tab.Len() != 0 || len(tab.far) != 0 {
		t.Fatalf("after deleting all: %d live, %d far", tab.Len(), len(tab.far))
	}
}

func BenchmarkTablePutGetDelete(b *testing.B) {
	var tab Table[int]
	v := new(int)
	const window = 700000 // ids live at once
	for i := 0; b.Loop(); i++ {
		id := int64(i)
		tab.Put(id, v)
		if tab.Get(id-window/2) == nil && i >= window {
			b.Fatal("missing")
		}
		tab.Delete(id - window)
	}
}

// pagesHeld is how many pages the table holds.
func (t *Table[T]) pagesHeld() int {
	n := 0
	for _, pg := range t.pages {
		if pg != nil {
			n++
		}
	}
	return n
}
