package scheduler

import (
	"math"
)

// priorityGraphWeights turns per-dimension scores into weights (scheduling.md §3): entry
// (i,j) of the k×k matrix is 1 if s_i > s_j, 0 if s_i < s_j, 0.5 if equal (diagonal 0.5);
// a dimension's weight is its row sum over the matrix total k²/2.
func priorityGraphWeights(s []float64) []float64 {
	w := make([]float64, len(s))
	priorityGraphWeightsInto(w, s)
	return w
}

// priorityGraphWeightsInto is priorityGraphWeights writing into w (len(s) entries).
func priorityGraphWeightsInto(w, s []float64) {
	k := len(s)
	if k == 0 {
		return
	}
	total := float64(k*k) / 2
	for i := range s {
		row := 0.0
		for j := range s {
			switch {
			case s[i] > s[j]:
				row++
			case s[i] == s[j]:
				row += 0.5
			}
		}
		w[i] = row / total
	}
}

// balanceWeightsInto writes (w0 + w1 + w2)/3 into out, and w1 and w2 into theirs: w0
// configured, w1 from the number of pending requests each dimension blocks, w2 from the
// cluster's usage ratio per dimension. The engine recomputes the weights after every
// placement, so it keeps them per partition rather than allocating.
func balanceWeightsInto(out, w1, w2, w0, blocked, usage []float64) {
	priorityGraphWeightsInto(w1[:len(blocked)], blocked)
	priorityGraphWeightsInto(w2[:len(usage)], usage)
	for i := range out {
		out[i] = (w0[i] + w1[i] + w2[i]) / 3
	}
}

// imbalance is y = sqrt(Σ w_i (d_i − m)²) with d_i = (used_i + add_i)/capacity_i and m the
// mean of d. Smaller is better balanced. Dimensions with zero capacity are left out.
func imbalance(used, add, capacity Resource, w []float64) float64 {
	var d [MaxResourceTypes]float64
	n := 0
	var sum float64
	for i := range w {
		if capacity[i] <= 0 {
			continue
		}
		d[i] = float64(used[i]+add[i]) / float64(capacity[i])
		sum += d[i]
		n++
	}
	if n == 0 {
		return 0
	}
	m := sum / float64(n)
	var y float64
	for i := range w {
		if capacity[i] <= 0 {
			continue
		}
		y += w[i] * (d[i] - m) * (d[i] - m)
	}
	return math.Sqrt(y)
}

// BalanceConfig sets the balance strategy (bobbin.scheduler.balance.*).
type BalanceConfig struct {
	// InitialWeights is w0, one per resource type, summing to 1 (equal when empty).
	InitialWeights []float64
	// Threshold is the cluster utilization at and above which the best-balanced node is
	// taken; below it nodes are walked round-robin (default 0.5).
	Threshold float64
	// GateWindow is how many later requests of the group are looked at when the head
	// request would worsen a node's balance (0 turns gating off); MaxSkips bounds how
	// often one request is passed over, so nothing starves.
	GateWindow int
	MaxSkips   int
	// Candidates bounds the fitting nodes compared per placement (tightest fits first),
	// so a choice never scans the cluster.
	Candidates int
	// AutoSkew: under the auto strategy, a request whose shares of the partition's
	// memory and vcores differ by this factor or more is placed by balance.
	AutoSkew float64
}

// DefaultBalanceConfig returns the documented defaults.
func DefaultBalanceConfig() BalanceConfig {
	return BalanceConfig{Threshold: 0.5, GateWindow: 8, MaxSkips: 16, Candidates: 32, AutoSkew: 1.5}
}

// balance chooses nodes by multi-dimensional balance (scheduling.md §3). It draws a
// bounded candidate set from a rings index instead of scanning every node.
type balance struct {
	*rings
	cfg     BalanceConfig
	weights func() []float64
	usage   func() float64 // cluster utilization U
	cursor  int            // node order of the last round-robin choice
	buf     []*node        // candidates' buffer, reused
	auto    bool           // StrategyAuto: balance only the requests governs picks
}

// governs reports whether balance places req. Always, but under the auto strategy only
// when the partition has capacity of a type beyond memory and vcores (GPUs: balance keeps
// their nodes' other resources for GPU work) or req's shares of the partition's memory
// and vcores differ by AutoSkew or more (a skewed shape strands the other resource);
// rings best fit places the rest, at half the cost (docs/benchmarks.md).
func (b *balance) governs(req Resource) bool {
	if !b.auto {
		return true
	}
	total := b.totals()
	for i := 2; i < b.types; i++ {
		if total[i] > 0 {
			return true
		}
	}
	if total[Memory] <= 0 || total[VCores] <= 0 {
		return false
	}
	m := float64(req[Memory]) / float64(total[Memory])
	v := float64(req[VCores]) / float64(total[VCores])
	lo, hi := min(m, v), max(m, v)
	if hi == 0 {
		return false
	}
	return lo == 0 || hi >= lo*b.cfg.AutoSkew
}

func newBalance(r *rings, cfg BalanceConfig, weights func() []float64, usage func() float64) *balance {
	return &balance{rings: r, cfg: cfg, weights: weights, usage: usage, cursor: -1}
}

// candidates returns up to Candidates fitting nodes, tightest dominant-type fit first.
// The slice is b's buffer, valid until the next call.
func (b *balance) candidates(req Resource, ok func(*node) bool) []*node {
	t := dominantType(req, b.totals(), b.types)
	limit := b.cfg.Candidates
	if limit <= 0 {
		limit = 32
	}
	out := b.buf[:0]
	visits := 0
	b.index[t].AscendGreaterOrEqual(freeKey{req[t], nil}, func(fk freeKey) bool {
		if len(out) >= limit || visits >= b.visits {
			return false
		}
		visits++
		if req.Fits(fk.n.room()) && ok(fk.n) {
			out = append(out, fk.n)
		}
		return true
	})
	b.buf = out
	return out
}

func (b *balance) choose(req Resource, ok func(*node) bool) *node {
	if !b.governs(req) {
		return b.rings.choose(req, ok)
	}
	cands := b.candidates(req, ok)
	if len(cands) == 0 {
		return nil
	}
	w := b.weights()
	if b.usage() < b.cfg.Threshold {
		// Round-robin from the last choice: the first node, in node order after the
		// cursor and wrapping round, whose balance improves. (The least improving order
		// above the cursor, else the least overall: no sort needed.)
		var after, first *node
		for _, n := range cands {
			if imbalance(n.allocated, req, n.spec.Capacity, w) >= imbalance(n.allocated, Resource{}, n.spec.Capacity, w) {
				continue
			}
			if n.order > b.cursor && (after == nil || n.order < after.order) {
				after = n
			}
			if first == nil || n.order < first.order {
				first = n
			}
		}
		if after == nil {
			after = first
		}
		if after != nil {
			b.cursor = after.order
			return after
		}
	}
	var best *node
	bestY := math.Inf(1)
	for _, n := range cands {
		y := imbalance(n.allocated, req, n.spec.Capacity, w)
		if y < bestY || (y == bestY && n.order < best.order) {
			best, bestY = n, y
		}
	}
	b.cursor = best.order
	return best
}

// worsens reports whether placing req on n makes n less balanced.
func (b *balance) worsens(n *node, req Resource) bool {
	w := b.weights()
	return imbalance(n.allocated, req, n.spec.Capacity, w) > imbalance(n.allocated, Resource{}, n.spec.Capacity, w)
}

// improves reports whether placing req on n makes n strictly better balanced.
func (b *balance) improves(n *node, req Resource) bool {
	w := b.weights()
	return imbalance(n.allocated, req, n.spec.Capacity, w) < imbalance(n.allocated, Resource{}, n.spec.Capacity, w)
}

// maxFree is the largest free amount of each type on any indexed node.
func (b *balance) maxFree() Resource {
	var r Resource
	for t := 0; t < b.types; t++ {
		if k, ok := b.index[t].Max(); ok {
			r[t] = k.free
		}
	}
	return r
}
