// Package seqtable holds pointers by ids that are handed out in sequence: the RM's
// containers, by the engine's id and by their number within their attempt.
//
// A map keyed by such ids spends its time on hashing and probing a large, churning table
// (a cache miss or two per probe at hundreds of thousands of containers, and growth
// while it fills). Ids handed out in sequence are dense, so the table is an array of
// fixed pages instead: an id's page and slot are arithmetic. A page is dropped once every
// id on it is gone, and pages before the oldest live one are trimmed, so the table holds
// pages only around live ids.
package seqtable

const (
	pageBits = 8
	pageSize = 1 << pageBits
	// maxGap bounds how far (in pages) an id may lie from the live range and still get a
	// page: ids far from it (a NodeManager reporting a made-up container number) go to a
	// map, so no id can make the table allocate an array of pages to reach it.
	maxGap = 4096
)

// Table holds *T by int64 id. Ids are expected to arrive mostly in increasing order and
// never to be reused; any id works, out-of-sequence ones cost more. The zero Table is
// empty and ready.
type Table[T any] struct {
	base  int64      // id of pages[0]'s first slot
	pages []*page[T] // nil where every id of a page has gone
	far   map[int64]*T
	live  int
}

type page[T any] struct {
	slots [pageSize]*T
	live  int
}

// locate is id's page and slot, and whether the pages cover it.
func (t *Table[T]) locate(id int64) (p, s int, ok bool) {
	if id < t.base {
		return 0, 0, false
	}
	off := id - t.base
	if off>>pageBits >= int64(len(t.pages)) {
		return 0, 0, false
	}
	return int(off >> pageBits), int(off & (pageSize - 1)), true
}

// Get is the value stored under id (nil: none).
func (t *Table[T]) Get(id int64) *T {
	if p, s, ok := t.locate(id); ok {
		if pg := t.pages[p]; pg != nil {
			return pg.slots[s]
		}
		return nil
	}
	if t.far != nil {
		return t.far[id]
	}
	return nil
}

// Put stores v under id, replacing what was there.
func (t *Table[T]) Put(id int64, v *T) {
	if v == nil {
		t.Delete(id)
		return
	}
	if !t.cover(id) {
		if t.far == nil {
			t.far = map[int64]*T{}
		}
		if _, had := t.far[id]; !had {
			t.live++
		}
		t.far[id] = v
		return
	}
	p, s, _ := t.locate(id)
	pg := t.pages[p]
	if pg == nil {
		pg = &page[T]{}
		t.pages[p] = pg
	}
	if pg.slots[s] == nil {
		pg.live++
		t.live++
	}
	pg.slots[s] = v
}

// cover extends the pages to id's page and reports true, or reports false when id lies
// too far from the live range for pages.
func (t *Table[T]) cover(id int64) bool {
	pageOf := func(id int64) int64 { return id >> pageBits } // floor, negative ids too
	if len(t.pages) == 0 {
		t.base = pageOf(id) << pageBits
		t.pages = append(t.pages, nil)
		return true
	}
	first, last := pageOf(t.base), pageOf(t.base)+int64(len(t.pages))-1
	switch p := pageOf(id); {
	case p > last:
		if p-last > maxGap {
			return false
		}
		for ; last < p; last++ {
			t.pages = append(t.pages, nil)
		}
	case p < first:
		if first-p > maxGap {
			return false
		}
		grown := make([]*page[T], first-p, int(first-p)+len(t.pages))
		t.pages = append(grown, t.pages...)
		t.base = p << pageBits
	}
	return true
}

// Delete removes id (nothing when it is not there).
func (t *Table[T]) Delete(id int64) {
	p, s, ok := t.locate(id)
	if !ok {
		if _, had := t.far[id]; had {
			delete(t.far, id)
			t.live--
		}
		return
	}
	pg := t.pages[p]
	if pg == nil || pg.slots[s] == nil {
		return
	}
	pg.slots[s] = nil
	pg.live--
	t.live--
	if pg.live > 0 || p == len(t.pages)-1 {
		return // the last page stays: new ids go there
	}
	t.pages[p] = nil
	// Trim leading empty pages so the pages cover live ids only. Slicing forward leaves
	// the array's head to the next growth's copy instead of copying now.
	n := 0
	for n < len(t.pages)-1 && t.pages[n] == nil {
		n++
	}
	if n > 0 {
		clear(t.pages[:n])
		t.pages = t.pages[n:]
		t.base += int64(n) << pageBits
	}
}

// Len is how many ids the table holds.
func (t *Table[T]) Len() int { return t.live }
