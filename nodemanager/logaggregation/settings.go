package logaggregation

import (
	"errors"
	"time"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/yarn/aggregatedlog"
	"github.com/bobbin-yarn/bobbin/yarn/remotefs"
)

// Settings are yarn.log-aggregation-enable, where the logs go and how often running
// applications' logs are rolled.
type Settings struct {
	Enabled bool
	// FS and Root are yarn.nodemanager.remote-app-log-dir resolved against fs.defaultFS.
	FS, Root string
	// Location is the layout and suffix under Root (aggregatedlog.ReadLocation).
	Location aggregatedlog.Location
	// RollInterval > 0 is rolling aggregation: running applications' logs are uploaded
	// every interval (at least an hour unless yarn.nodemanager.log-aggregation.debug-enabled,
	// as in the Java NM), each upload a file <node>_<time> of the files not uploaded yet.
	RollInterval time.Duration
	// NumLogFiles bounds the rolled files kept per application and node
	// (yarn.nodemanager.log-aggregation.num-log-files-per-app): the oldest go.
	NumLogFiles int
}

// minRollInterval is the Java NM's floor for the rolling interval outside debug mode.
const minRollInterval = time.Hour

// ReadSettings reads the log aggregation keys.
func ReadSettings(c *conf.Configuration) (Settings, error) {
	var s Settings
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	var err error
	s.Enabled, err = c.Bool("yarn.log-aggregation-enable")
	add(err)
	s.Location, err = aggregatedlog.ReadLocation(c)
	add(err)
	if l := s.Location; err == nil {
		s.FS, s.Root, err = remotefs.Resolve(c, l.Dir)
		if err != nil && s.Enabled {
			add(&conf.ValueError{Source: c.Source(l.DirKey), Key: l.DirKey, Value: l.Dir, Reason: err.Error()})
		}
	}
	s.RollInterval, err = c.Duration("yarn.nodemanager.log-aggregation.roll-monitoring-interval-seconds", time.Second)
	add(err)
	debug, err := c.Bool("yarn.nodemanager.log-aggregation.debug-enabled")
	add(err)
	if s.RollInterval > 0 && s.RollInterval < minRollInterval && !debug {
		s.RollInterval = minRollInterval
	}
	s.NumLogFiles, err = c.Int("yarn.nodemanager.log-aggregation.num-log-files-per-app")
	add(err)
	if s.NumLogFiles < 1 {
		s.NumLogFiles = 1
	}
	return s, errors.Join(errs...)
}
