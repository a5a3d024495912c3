package scheduler

import (
	"math/rand/v2"
	"testing"
)

// The float fast path of compareRanked must order exactly as the 192-bit comparison,
// near-ties and extremes included.
func TestCompareRankedMatchesExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	exact := func(a, b rankedGroup) int {
		switch {
		case a.v.less(b.v):
			return -1
		case b.v.less(a.v):
			return 1
		case a.g.name < b.g.name:
			return -1
		case a.g.name > b.g.name:
			return 1
		}
		return 0
	}
	pick := func() groupValue {
		switch r.IntN(6) {
		case 0:
			return groupValue{0, 1 + r.Uint64N(1<<40), r.Uint64N(ppm)}
		case 1:
			return groupValue{1 + r.Uint64N(1<<40), 1 + r.Uint64N(1<<40), 0}
		case 2: // huge operands
			return groupValue{1 + r.Uint64(), 1 + r.Uint64(), 1 + r.Uint64N(ppm)}
		}
		return groupValue{1 + r.Uint64N(1<<20), 1 + r.Uint64N(1<<20), 1 + r.Uint64N(ppm)}
	}
	groups := []*group{{name: "a", nameRank: 0}, {name: "b", nameRank: 1}}
	for i := 0; i < 200000; i++ {
		va := pick()
		vb := pick()
		if i%3 == 0 { // a near-tie: the same fraction scaled, or off by one in a large numerator
			k := 1 + r.Uint64N(1000)
			vb = groupValue{va.usedNum * k, va.usedDen * k, va.quota}
			if i%2 == 0 && vb.usedNum > 1 {
				vb.usedNum--
			}
		}
		a := newRankedGroup(groups[r.IntN(2)], va)
		b := newRankedGroup(groups[r.IntN(2)], vb)
		if got, want := sign(compareRanked(a, b)), exact(a, b); got != want {
			t.Fatalf("%+v vs %+v: %d, exact %d", va, vb, got, want)
		}
	}
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}
