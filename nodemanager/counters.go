package nodemanager

import (
	metrics "github.com/rcrowley/go-metrics"

	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// nmCounters are the container totals of the Java NM's NodeManagerMetrics, kept as
// go-metrics counters (so /metrics and /prom show them too).
type nmCounters struct {
	launched, completed, failed, killed metrics.Counter
}

func newNMCounters(reg metrics.Registry) nmCounters {
	c := func(n string) metrics.Counter { return metrics.GetOrRegisterCounter("nm."+n, reg) }
	return nmCounters{launched: c("ContainersLaunched"), completed: c("ContainersCompleted"), failed: c("ContainersFailed"), killed: c("ContainersKilled")}
}

// ended counts a container's end as the Java NM does: killed on request (the AM, the RM,
// eviction, limits), completed with exit 0, failed otherwise.
func (c nmCounters) ended(killed bool, exit int32) {
	switch {
	case killed || exit == exitcode.Preempted || exit == exitcode.KilledExceededPmem || exit == exitcode.KilledExceededVmem:
		c.killed.Inc(1)
	case exit == 0:
		c.completed.Inc(1)
	default:
		c.failed.Inc(1)
	}
}
