package scheduler

// The sets of containers each node and application holds. At tens of thousands of
// allocations a second every container enters and leaves three of them; as maps keyed
// by container id each add and remove was a hash probe of a large, churning table (a
// cache miss each), so they are slices where each container
// records its place: adding appends, removing moves the last one into the hole.

// setKind names the sets a container is in; its slot in each is container.slots[kind].
type setKind uint8

const (
	onNode      setKind = iota // node.containers
	ofApp                      // app.containers
	undelivered                // app.undelivered
	setKinds
)

// containerSet is an unordered set of containers of one kind.
type containerSet struct {
	kind  setKind
	items []*container
}

// add puts c in s; c must not be in it.
func (s *containerSet) add(c *container) {
	s.items = append(s.items, c)
	c.slots[s.kind] = int32(len(s.items)) // its index + 1: 0 is "not in"
}

// remove takes c out of s if it is in it.
func (s *containerSet) remove(c *container) {
	i := c.slots[s.kind] - 1
	if i < 0 {
		return
	}
	last := len(s.items) - 1
	moved := s.items[last]
	s.items[i] = moved
	moved.slots[s.kind] = i + 1
	s.items[last] = nil
	s.items = s.items[:last]
	c.slots[s.kind] = 0
}

// len is how many containers s holds.
func (s *containerSet) len() int { return len(s.items) }
