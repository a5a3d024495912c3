package sim

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/conf/capacity"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
)

// SyntheticSpec sizes the throughput scenario of `bobbin sim --synthetic`.
type SyntheticSpec struct {
	Nodes, Apps, Asks, Queues int
	Strategy                  string
	// Progress, when set, hears the allocations so far every progressEvery of them.
	Progress func(allocations int) `json:"-"`
}

// progressEvery is how many allocations a synthetic run makes between Progress calls.
const progressEvery = 50000

// ParseSynthetic reads "nodes=10000,apps=1000,asks=100000,queues=20".
func ParseSynthetic(s string) (SyntheticSpec, error) {
	spec := SyntheticSpec{Nodes: 10000, Apps: 1000, Asks: 100000, Queues: 20}
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if !ok || err != nil || n <= 0 {
			return spec, fmt.Errorf("--synthetic: %q is not name=positive number", part)
		}
		switch strings.TrimSpace(k) {
		case "nodes":
			spec.Nodes = n
		case "apps":
			spec.Apps = n
		case "asks":
			spec.Asks = n
		case "queues":
			spec.Queues = n
		default:
			return spec, fmt.Errorf("--synthetic: unknown field %q (nodes, apps, asks, queues)", k)
		}
	}
	if spec.Queues > 100 {
		return spec, fmt.Errorf("--synthetic: at most 100 queues")
	}
	return spec, nil
}

// SyntheticReport is the synthetic run's output.
type SyntheticReport struct {
	Strategy    string `json:"strategy"`
	Nodes       int    `json:"nodes"`
	Apps        int    `json:"apps"`
	Asks        int    `json:"asks"`
	Queues      int    `json:"queues"`
	Allocations int    `json:"allocations"`
	// PlacementDigest is an FNV-64a hash of every allocation (container, application,
	// node, in order): two builds placed identically when their digests match, so a
	// faster engine can show it changed no decision.
	PlacementDigest      string  `json:"placement_digest"`
	EngineSeconds        float64 `json:"engine_seconds"`
	AllocationsPerSecond float64 `json:"allocations_per_second"`
	LatencyMicros        struct {
		P50, P90, P99, Max float64
	} `json:"allocation_latency_us"`
	// Unplaced are the asks left when no more could be placed, and UnplacedReasons why:
	// the last pass's reason for each (application, ask) it passed over, counted.
	Unplaced        int            `json:"unplaced"`
	UnplacedReasons map[string]int `json:"unplaced_reasons,omitempty"`
}

// NewSyntheticEngine builds the throughput scenario: nodes of four sizes (a tenth in a
// "gpu" label partition, a tenth static), queues of equal capacity over every label, and
// apps (a tenth asking for "gpu") whose single-container asks come in four shapes and
// priorities.
func NewSyntheticEngine(spec SyntheticSpec) (*scheduler.Engine, error) {
	c := conf.Empty()
	var names []string
	for i := 0; i < spec.Queues; i++ {
		names = append(names, fmt.Sprintf("q%02d", i))
	}
	c.Set(capacity.Prefix+"root.queues", strings.Join(names, ","))
	c.Set(capacity.Prefix+"root.accessible-node-labels", "*")
	c.Set(capacity.Prefix+"root.accessible-node-labels.gpu.capacity", "100")
	for i, n := range names {
		share := 100 / spec.Queues
		if i == 0 {
			share += 100 - share*spec.Queues
		}
		c.Set(capacity.Prefix+"root."+n+".capacity", strconv.Itoa(share))
		// Its one user may take the whole cluster, as before user-limit-factor had a default.
		c.Set(capacity.Prefix+"root."+n+".user-limit-factor", strconv.Itoa((100+share-1)/share))
		c.Set(capacity.Prefix+"root."+n+".accessible-node-labels", "*")
		c.Set(capacity.Prefix+"root."+n+".accessible-node-labels.gpu.capacity", strconv.Itoa(share))
	}
	tree, err := capacity.Parse(c)
	if err != nil {
		return nil, err
	}
	cfg := scheduler.DefaultConfig()
	if spec.Strategy != "" {
		cfg.Strategy = spec.Strategy
	}
	t0 := DefaultStart
	cfg.Now = func() time.Time { return t0 }
	e, err := scheduler.New(cfg, tree)
	if err != nil {
		return nil, err
	}
	for i := 0; i < spec.Nodes; i++ {
		n := scheduler.NodeSpec{ID: fmt.Sprintf("node%05d:8041", i), Static: i%10 == 1,
			Capacity: scheduler.Resource{int64(64+(i%4)*32) << 10, int64(16 + (i%4)*8)}}
		if i%10 == 0 {
			n.Partition = "gpu"
		}
		if err := e.AddNode(n); err != nil {
			return nil, err
		}
	}
	perApp := max(spec.Asks/spec.Apps, 1)
	for i := 0; i < spec.Apps; i++ {
		id := scheduler.AppID(fmt.Sprintf("app%05d", i))
		label := ""
		if i%10 == 0 {
			label = "gpu"
		}
		if err := e.AddApp(scheduler.AppSpec{ID: id, Queue: names[i%spec.Queues], Label: label, Submit: t0}); err != nil {
			return nil, err
		}
		asks := make([]scheduler.Ask, 4)
		for k := 0; k < perApp; k++ {
			s := k % 4
			asks[s] = scheduler.Ask{Priority: int32(s), ResourceName: "*", Capability: scheduler.Resource{int64(1+s) << 10, int64(1 + s%2)}, Count: asks[s].Count + 1}
		}
		var nonEmpty []scheduler.Ask
		for _, a := range asks {
			if a.Count > 0 {
				nonEmpty = append(nonEmpty, a)
			}
		}
		if err := e.UpdateAsks(id, nonEmpty); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// RunSynthetic schedules the synthetic scenario flat out, one allocation per call so each
// allocation's latency is measured.
func RunSynthetic(spec SyntheticSpec) (*SyntheticReport, error) {
	e, err := NewSyntheticEngine(spec)
	if err != nil {
		return nil, err
	}
	rep := &SyntheticReport{Strategy: e.Config().Strategy, Nodes: spec.Nodes, Apps: spec.Apps, Asks: spec.Asks, Queues: spec.Queues}
	var lat []time.Duration
	var total time.Duration
	digest := fnv.New64a()
	for {
		start := time.Now()
		res := e.Schedule(1)
		d := time.Since(start)
		if len(res.Allocations) == 0 {
			for _, u := range res.Unplaced {
				if rep.UnplacedReasons == nil {
					rep.UnplacedReasons = map[string]int{}
				}
				rep.UnplacedReasons[string(u.Reason)]++
			}
			break
		}
		if spec.Progress != nil && len(lat) > 0 && len(lat)%progressEvery == 0 {
			spec.Progress(len(lat))
		}
		total += d
		lat = append(lat, d)
		for _, a := range res.Allocations {
			fmt.Fprintf(digest, "%d %s %s\n", a.Container, a.App, a.Node)
		}
	}
	rep.Allocations = len(lat)
	rep.Unplaced = max(spec.Asks-len(lat), 0)
	rep.PlacementDigest = fmt.Sprintf("%016x", digest.Sum64())
	rep.EngineSeconds = total.Seconds()
	if total > 0 {
		rep.AllocationsPerSecond = float64(len(lat)) / total.Seconds()
	}
	if len(lat) > 0 {
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		pct := func(p float64) float64 {
			return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Nanoseconds()) / 1000
		}
		rep.LatencyMicros.P50, rep.LatencyMicros.P90, rep.LatencyMicros.P99 = pct(0.50), pct(0.90), pct(0.99)
		rep.LatencyMicros.Max = float64(lat[len(lat)-1].Nanoseconds()) / 1000
	}
	return rep, nil
}
