// Package scheduler is Bobbin's scheduling engine. It knows nothing about RPC: the RM and
// the simulator feed it events (nodes, applications, asks, container completions) and
// read back allocations and preemptions. The mechanisms are those of
// docs/scheduling.md: quota groups ordered by used/quota, the group round,
// hysteresis preemption, label partitions, and ring / balance / first-fit node choice.
package scheduler

import (
	"fmt"
	"math/bits"
	"strings"
)

// MaxResourceTypes bounds the resource types a cluster may have: memory and vcores plus up
// to two extra types (e.g. yarn.io/gpu). A fixed-size vector keeps the hot path free of
// allocation.
const MaxResourceTypes = 4

// Indexes of the two types every cluster has.
const (
	Memory = 0 // MB
	VCores = 1
)

// Resource is an amount of every resource type, indexed as the cluster's Types.
type Resource [MaxResourceTypes]int64

// Add returns r + o.
func (r Resource) Add(o Resource) Resource {
	for i := range r {
		r[i] += o[i]
	}
	return r
}

// Scaled returns r × frac in every type, truncated.
func (r Resource) Scaled(frac float64) Resource {
	for i := range r {
		r[i] = int64(float64(r[i]) * frac)
	}
	return r
}

// Sub returns r - o.
func (r Resource) Sub(o Resource) Resource {
	for i := range r {
		r[i] -= o[i]
	}
	return r
}

// Fits reports whether r fits into free in every type.
func (r Resource) Fits(free Resource) bool {
	for i := range r {
		if r[i] > free[i] {
			return false
		}
	}
	return true
}

// IsZero reports whether every amount is zero.
func (r Resource) IsZero() bool { return r == Resource{} }

// AnyNegative reports whether some amount is below zero.
func (r Resource) AnyNegative() bool {
	for _, v := range r {
		if v < 0 {
			return true
		}
	}
	return false
}

// Max returns the per-type maximum of r and o.
func (r Resource) Max(o Resource) Resource {
	for i := range r {
		r[i] = max(r[i], o[i])
	}
	return r
}

// Types names the cluster's resource types in vector order.
type Types struct {
	Names []string // Names[0] = "memory-mb", Names[1] = "vcores", then extras
}

// DefaultTypes has memory and vcores only.
var DefaultTypes = Types{Names: []string{"memory-mb", "vcores"}}

// Len is the number of types in use.
func (t Types) Len() int { return len(t.Names) }

// Format prints a resource as <memory:1024, vCores:1, yarn.io/gpu:2>.
func (t Types) Format(r Resource) string {
	var b strings.Builder
	b.WriteString("<")
	for i, n := range t.Names {
		if i > 0 {
			b.WriteString(", ")
		}
		switch i {
		case Memory:
			n = "memory"
		case VCores:
			n = "vCores"
		}
		fmt.Fprintf(&b, "%s:%d", n, r[i])
	}
	b.WriteString(">")
	return b.String()
}

// Share is an exact fraction num/den (den > 0) of a cluster total. Shares are compared by
// 128-bit cross multiplication, so orderings never depend on floating-point rounding.
type Share struct {
	Num, Den uint64
}

// Less reports a < b exactly.
func (a Share) Less(b Share) bool { return cmpProducts(a.Num, b.Den, b.Num, a.Den) < 0 }

// Float is the share as a float64, for reports and the fair shares' arithmetic.
func (a Share) Float() float64 {
	if a.Den == 0 {
		return 0
	}
	return float64(a.Num) / float64(a.Den)
}

// cmpProducts compares x1*y1 with x2*y2 using 128-bit products.
func cmpProducts(x1, y1, x2, y2 uint64) int {
	h1, l1 := bits.Mul64(x1, y1)
	h2, l2 := bits.Mul64(x2, y2)
	switch {
	case h1 != h2:
		if h1 < h2 {
			return -1
		}
		return 1
	case l1 != l2:
		if l1 < l2 {
			return -1
		}
		return 1
	}
	return 0
}

// DominantShare returns used's largest share of total over the types in use (the seed's
// "key resource" method): max_i used_i/total_i. With cpuOnly only vcores count. Types
// whose total is zero are skipped.
func DominantShare(used, total Resource, types int, cpuOnly bool) Share {
	best := Share{0, 1}
	for i := 0; i < types; i++ {
		if cpuOnly && i != VCores {
			continue
		}
		if total[i] <= 0 || used[i] <= 0 {
			continue
		}
		s := Share{uint64(used[i]), uint64(total[i])}
		if best.Less(s) {
			best = s
		}
	}
	return best
}

// Vector converts resource names to amounts into a Resource: "memory" and "memory-mb" are
// memory in MB, "vcores" the vcores, other names the cluster's extra types.
func (t Types) Vector(m map[string]int64) (Resource, error) {
	var r Resource
	return r, t.fill(&r, m)
}

// Ceiling is m as a Resource, -1 for every type m does not name (no ceiling).
func (t Types) Ceiling(m map[string]int64) (Resource, error) {
	var r Resource
	for i := range r {
		r[i] = -1
	}
	return r, t.fill(&r, m)
}

// fill sets the amounts m names in r.
func (t Types) fill(r *Resource, m map[string]int64) error {
	for name, v := range m {
		i := t.index(name)
		if i < 0 {
			return fmt.Errorf("unknown resource type %q", name)
		}
		r[i] = v
	}
	return nil
}

// index is the position of the resource type called name, -1 for none.
func (t Types) index(name string) int {
	switch name {
	case "memory", "memory-mb":
		return Memory
	case "vcores":
		return VCores
	}
	i := -1
	for j, n := range t.Names {
		if n == name {
			i = j
		}
	}
	return i
}
