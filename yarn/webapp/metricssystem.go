package webapp

import (
	"strings"

	metrics "github.com/rcrowley/go-metrics"
)

// The beans of Hadoop's metrics system and of UserGroupInformation, as a Java daemon's
// /jmx has them, computed for Bobbin's: its sources are its Hadoop records (the beans
// named Hadoop:service=...), computed at each /jmx or /prom request (a snapshot); its one
// sink is the Prometheus exposition, each scrape a publish (as Java 3.x's
// PrometheusMetricsSink, which Bobbin always serves). A scrape is answered as it comes,
// so nothing is ever queued or dropped.

// promSink is the sink's name in the Sink_<name>* attributes.
const promSink = "prometheus"

func (d *Daemon) timers() {
	d.timersOnce.Do(func() { d.snapshots, d.publishes = metrics.NewTimer(), metrics.NewTimer() })
}

// rate is a timer's calls and mean time in milliseconds, as Hadoop's MutableRate
// reports them (<Name>NumOps, <Name>AvgTime); a timer not there is none.
func rate(t metrics.Timer) (int64, float64) {
	if t == nil {
		return 0, 0
	}
	s := t.Snapshot()
	return s.Count(), s.Mean() / 1e6
}

// registryTimer is the registry's timer name, if the daemon has one.
func (d *Daemon) registryTimer(name string) metrics.Timer {
	if d.Metrics == nil {
		return nil
	}
	t, _ := d.Metrics.Get(name).(metrics.Timer)
	return t
}

// ugiBean is UgiMetrics: keytab logins (yarn/kerberos) and the group lookups that reach
// the system (yarn/authz), from the daemon's registry.
func (d *Daemon) ugiBean() Bean {
	attrs := []Attr{{"tag.Context", "ugi"}, {"tag.Hostname", d.Host}}
	for _, m := range []struct{ attr, timer string }{
		{"LoginSuccess", "ugi.LoginSuccess"}, {"LoginFailure", "ugi.LoginFailure"}, {"GetGroups", "ugi.GetGroups"},
	} {
		n, avg := rate(d.registryTimer(m.timer))
		attrs = append(attrs, Attr{m.attr + "NumOps", n}, Attr{m.attr + "AvgTime", avg})
	}
	return Bean{Name: "Hadoop:service=" + d.Service + ",name=UgiMetrics", ModelerType: "UgiMetrics", Attrs: attrs}
}

// metricsSystemBeans are MetricsSystem's Stats (over the records in beans) and Control.
func (d *Daemon) metricsSystemBeans(beans []Bean) []Bean {
	d.timers()
	sources := 0
	for _, b := range beans {
		if strings.HasPrefix(b.Name, "Hadoop:") {
			sources++
		}
	}
	snaps, snapAvg := rate(d.snapshots)
	pubs, pubAvg := rate(d.publishes)
	prefix := "Hadoop:service=" + d.Service + ",name=MetricsSystem,sub="
	return []Bean{
		{Name: prefix + "Stats", ModelerType: "MetricsSystem,sub=Stats", Attrs: []Attr{
			{"tag.Context", "metricssystem"}, {"tag.Hostname", d.Host},
			{"NumActiveSources", sources}, {"NumAllSources", sources}, {"NumActiveSinks", 1}, {"NumAllSinks", 1},
			{"Sink_" + promSink + "NumOps", pubs}, {"Sink_" + promSink + "AvgTime", pubAvg},
			{"Sink_" + promSink + "Dropped", 0}, {"Sink_" + promSink + "Qsize", 0},
			{"SnapshotNumOps", snaps}, {"SnapshotAvgTime", snapAvg},
			{"PublishNumOps", pubs}, {"PublishAvgTime", pubAvg},
			{"DroppedPubAll", 0},
		}},
		{Name: prefix + "Control", ModelerType: "org.apache.hadoop.metrics2.impl.MetricsSystemImpl"},
	}
}
