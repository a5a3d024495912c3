package scheduler

// containerTable holds the engine's containers by id. Ids are handed out in sequence
// (Engine.nextCID), so the table is an array of fixed pages instead of a map: a map of
// 100,000 containers spent a fifth of an allocation's time growing (rehashing) as it
// filled. A page is dropped once every container on it is gone, and pages before the
// oldest live one are trimmed, so a long-running RM holds pages only for live ids.
type containerTable struct {
	base  ContainerID      // id of pages[0]'s first slot
	pages []*containerPage // nil where every container of a page has gone
	live  int              // containers held
}

const containerPageBits = 12

type containerPage struct {
	slots [1 << containerPageBits]*container
	live  int
}

func (t *containerTable) locate(id ContainerID) (page, slot int, ok bool) {
	if id < t.base {
		return 0, 0, false
	}
	off := id - t.base
	page, slot = int(off>>containerPageBits), int(off&(1<<containerPageBits-1))
	return page, slot, page < len(t.pages)
}

func (t *containerTable) get(id ContainerID) (*container, bool) {
	p, s, ok := t.locate(id)
	if !ok || t.pages[p] == nil {
		return nil, false
	}
	c := t.pages[p].slots[s]
	return c, c != nil
}

// put stores c under c.id, which must be at or after every id stored before it was
// trimmed (ids are never reused).
func (t *containerTable) put(c *container) {
	if len(t.pages) == 0 {
		t.base = c.id &^ (1<<containerPageBits - 1)
	}
	p, s, _ := t.locate(c.id)
	for p >= len(t.pages) {
		t.pages = append(t.pages, nil)
	}
	pg := t.pages[p]
	if pg == nil {
		pg = &containerPage{}
		t.pages[p] = pg
	}
	if pg.slots[s] == nil {
		pg.live++
		t.live++
	}
	pg.slots[s] = c
}

func (t *containerTable) del(id ContainerID) {
	p, s, ok := t.locate(id)
	if !ok || t.pages[p] == nil || t.pages[p].slots[s] == nil {
		return
	}
	pg := t.pages[p]
	pg.slots[s] = nil
	pg.live--
	t.live--
	if pg.live == 0 && p < len(t.pages)-1 {
		t.pages[p] = nil // the last page stays: new ids go there
	}
	// Trim leading empty pages so the array covers live ids only.
	n := 0
	for n < len(t.pages)-1 && t.pages[n] == nil {
		n++
	}
	if n > 0 {
		t.pages = append(t.pages[:0], t.pages[n:]...)
		t.base += ContainerID(n) << containerPageBits
	}
}

func (t *containerTable) len() int { return t.live }
