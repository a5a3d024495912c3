package scheduler

import "github.com/bobbin-yarn/bobbin/internal/seqtable"

// containerTable holds the engine's containers by id. Ids are handed out in sequence
// (Engine.nextCID), so it is a seqtable (fixed pages) instead of a map: a map of 100,000
// containers spent a fifth of an allocation's time growing (rehashing) as it filled.
type containerTable struct{ t seqtable.Table[container] }

func (t *containerTable) get(id ContainerID) (*container, bool) {
	c := t.t.Get(int64(id))
	return c, c != nil
}

// put stores c under c.id.
func (t *containerTable) put(c *container) { t.t.Put(int64(c.id), c) }

func (t *containerTable) del(id ContainerID) { t.t.Delete(int64(id)) }
