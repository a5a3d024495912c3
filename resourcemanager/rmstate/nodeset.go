package rmstate

import "math/bits"

// nodeIndex numbers the nodes the container table has seen, so per-application and
// per-attempt sets of nodes are bitsets: 200 applications on 2,000 nodes are 50 KB of
// bits rather than 400,000 map entries. Indexes are never reused; a node that leaves and
// comes back keeps its number.
type nodeIndex struct {
	idx  map[string]int
	keys []string
}

func (x *nodeIndex) of(node string) int {
	if i, ok := x.idx[node]; ok {
		return i
	}
	if x.idx == nil {
		x.idx = map[string]int{}
	}
	i := len(x.keys)
	x.idx[node] = i
	x.keys = append(x.keys, node)
	return i
}

// nodeSet is a set of node indexes.
type nodeSet []uint64

// add adds i and reports whether it was new.
func (s *nodeSet) add(i int) bool {
	w := i / 64
	if w >= len(*s) {
		*s = append(*s, make([]uint64, w+1-len(*s))...)
	}
	bit := uint64(1) << (i % 64)
	if (*s)[w]&bit != 0 {
		return false
	}
	(*s)[w] |= bit
	return true
}

// each calls fn with every index in the set, in order.
func (s nodeSet) each(fn func(i int)) {
	for w, word := range s {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			fn(w*64 + b)
			word &= word - 1
		}
	}
}
