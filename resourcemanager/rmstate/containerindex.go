package rmstate

import (
	"slices"

	"github.com/bobbin-yarn/bobbin/internal/seqtable"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
)

// containerIndex finds the tracked containers by YARN id and by the engine's id, and
// lists each application's.
//
// At 100,000 containers a second, every container is looked up by id when it is placed,
// reported and forgotten. Maps keyed by the whole id (ContainerID, 24 bytes) held 700,000
// entries at that rate: a sixth of the RM's CPU went to hashing and to probes that missed
// the cache. Container ids are made in sequence within an attempt (the RM's epoch, then a
// counter: Containers.nextIDLocked), and the engine's ids in sequence overall, so both
// are seqtables (arrays of pages) behind a small map of the applications.
type containerIndex struct {
	apps     map[records.ApplicationID]*appContainers
	byEngine seqtable.Table[Container]
	n        int
}

// appContainers are one application's tracked containers.
type appContainers struct {
	list []*Container // in no order; Container.appIdx is each one's place
	// seqs hold its containers by number, for each attempt and RM epoch that made some
	// (a few: an application has an attempt or two, and a restart adds an epoch).
	seqs []attemptSeqs
}

type attemptSeqs struct {
	attempt int32
	epoch   int64
	bySeq   seqtable.Table[Container]
}

// epochShift splits a container's number: the RM's epoch above it, the attempt's
// counter below (container_e<epoch>_...).
const epochShift = 40

func splitID(id int64) (epoch, seq int64) { return id >> epochShift, id & (1<<epochShift - 1) }

func newContainerIndex() containerIndex {
	return containerIndex{apps: map[records.ApplicationID]*appContainers{}}
}

// seqsOf is the table of id's attempt and epoch in a (nil: none; made when create is
// set).
func (a *appContainers) seqsOf(id records.ContainerID, create bool) *seqtable.Table[Container] {
	epoch, _ := splitID(id.ID)
	for i := range a.seqs {
		if s := &a.seqs[i]; s.attempt == id.Attempt.Attempt && s.epoch == epoch {
			return &s.bySeq
		}
	}
	if !create {
		return nil
	}
	a.seqs = append(a.seqs, attemptSeqs{attempt: id.Attempt.Attempt, epoch: epoch})
	return &a.seqs[len(a.seqs)-1].bySeq
}

// get is the tracked container with id (nil: none).
func (x *containerIndex) get(id records.ContainerID) *Container {
	a := x.apps[id.Attempt.App]
	if a == nil {
		return nil
	}
	if s := a.seqsOf(id, false); s != nil {
		_, seq := splitID(id.ID)
		return s.Get(seq)
	}
	return nil
}

// engine is the tracked container the engine knows as id (nil: none).
func (x *containerIndex) engine(id scheduler.ContainerID) *Container {
	return x.byEngine.Get(int64(id))
}

// list is app's tracked containers (the index's own slice: not to be kept or changed).
func (x *containerIndex) list(app records.ApplicationID) []*Container {
	if a := x.apps[app]; a != nil {
		return a.list
	}
	return nil
}

// add tracks c, which is not tracked; live: it holds room in the engine, under
// c.EngineID.
func (x *containerIndex) add(c *Container, live bool) {
	app := c.ID.Attempt.App
	a := x.apps[app]
	if a == nil {
		a = &appContainers{}
		x.apps[app] = a
	}
	_, seq := splitID(c.ID.ID)
	a.seqsOf(c.ID, true).Put(seq, c)
	if live {
		x.byEngine.Put(int64(c.EngineID), c)
	}
	c.appIdx, c.tracked = int32(len(a.list)), true
	a.list = append(a.list, c)
	x.n++
}

// remove stops tracking c (nothing if it is not tracked).
func (x *containerIndex) remove(c *Container) {
	if !c.tracked {
		return
	}
	c.tracked = false
	x.n--
	if x.byEngine.Get(int64(c.EngineID)) == c {
		x.byEngine.Delete(int64(c.EngineID))
	}
	app := c.ID.Attempt.App
	a := x.apps[app]
	last := a.list[len(a.list)-1]
	a.list[c.appIdx], last.appIdx = last, c.appIdx
	a.list[len(a.list)-1] = nil
	a.list = a.list[:len(a.list)-1]
	if len(a.list) == 0 {
		delete(x.apps, app)
		return
	}
	s := a.seqsOf(c.ID, false)
	if s == nil {
		return // not reachable: a tracked container's id does not change
	}
	_, seq := splitID(c.ID.ID)
	s.Delete(seq)
	if s.Len() == 0 { // the attempt (or its epoch) has none left: drop its pages
		epoch, _ := splitID(c.ID.ID)
		a.seqs = slices.DeleteFunc(a.seqs, func(s attemptSeqs) bool { return s.attempt == c.ID.Attempt.Attempt && s.epoch == epoch })
	}
}

// removeApp stops tracking every container of app.
func (x *containerIndex) removeApp(app records.ApplicationID) {
	a := x.apps[app]
	if a == nil {
		return
	}
	for _, c := range a.list {
		c.tracked = false
		if x.byEngine.Get(int64(c.EngineID)) == c {
			x.byEngine.Delete(int64(c.EngineID))
		}
	}
	x.n -= len(a.list)
	delete(x.apps, app)
}

// each calls fn with every tracked container.
func (x *containerIndex) each(fn func(c *Container)) {
	for _, a := range x.apps {
		for _, c := range a.list {
			fn(c)
		}
	}
}

// len is how many containers are tracked.
func (x *containerIndex) len() int { return x.n }

// idFilter is a set of container ids that may answer "yes" for an id not in it (one in
// twenty at fifty ids) and never "no" for one in it: a heartbeat's running containers
// are checked against it before being looked up.
type idFilter [16]uint64

func (f *idFilter) bit(id records.ContainerID) (word int, mask uint64) {
	h := uint64(id.ID)*0x9e3779b97f4a7c15 ^ uint64(uint32(id.Attempt.App.ID))*0xc2b2ae3d27d4eb4f ^ uint64(uint32(id.Attempt.Attempt))*0x165667b19e3779f9
	b := h >> (64 - 10) // 1,024 bits
	return int(b / 64), 1 << (b % 64)
}

func (f *idFilter) add(id records.ContainerID) {
	w, m := f.bit(id)
	f[w] |= m
}

func (f *idFilter) has(id records.ContainerID) bool {
	w, m := f.bit(id)
	return f[w]&m != 0
}
