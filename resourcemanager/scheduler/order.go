package scheduler

import "sort"

// groupValue is a group's priority value used/quota, kept as the exact fraction
// used.Num / (used.Den * quota). Smaller values are served first; a group using
// nothing has value 0. (scheduling.md §1: the source's LCM(quotas)/used formula contradicts
// its examples; used*LCM/quota orders exactly like used/quota.)
type groupValue struct {
	usedNum, usedDen uint64 // used share of the cluster
	quota            uint64 // quota in the same units for every group (ppm of the cluster)
}

// less orders a before b: a.used/a.quota < b.used/b.quota, exactly. A zero quota ranks
// after every group with a quota, unless it uses nothing.
func (a groupValue) less(b groupValue) bool {
	az, bz := a.usedNum == 0, b.usedNum == 0
	if az || bz {
		return az && !bz
	}
	if a.quota == 0 || b.quota == 0 {
		return a.quota != 0 && b.quota == 0
	}
	// a.num/(a.den*a.q) < b.num/(b.den*b.q)  <=>  a.num*b.den*b.q < b.num*a.den*a.q.
	// Each side is up to 192 bits: compare num*den first as 128-bit, then scale by the
	// quota with a second 128x64 multiplication done as two 64-bit halves.
	return cmp192(a.usedNum, b.usedDen, b.quota, b.usedNum, a.usedDen, a.quota) < 0
}

func (a groupValue) equal(b groupValue) bool {
	return !a.less(b) && !b.less(a)
}

// cmp192 compares x*y*z with p*q*r exactly.
func cmp192(x, y, z, p, q, r uint64) int {
	a := mul192(x, y, z)
	b := mul192(p, q, r)
	for i := 2; i >= 0; i-- {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// mul192 returns x*y*z as three 64-bit limbs, least significant first.
func mul192(x, y, z uint64) [3]uint64 {
	hi, lo := mulFull(x, y)
	h1, l1 := mulFull(lo, z)
	h2, l2 := mulFull(hi, z)
	mid, carry := addc(h1, l2)
	return [3]uint64{l1, mid, h2 + carry}
}

// rankedGroup is a group with its value in the partition being scheduled.
type rankedGroup struct {
	g *group
	v groupValue
}

// sortGroups orders groups by value, ties by name so the order is deterministic.
func sortGroups(gs []rankedGroup) {
	sort.Slice(gs, func(i, j int) bool {
		if gs[i].v.less(gs[j].v) {
			return true
		}
		if gs[j].v.less(gs[i].v) {
			return false
		}
		return gs[i].g.name < gs[j].g.name
	})
}
