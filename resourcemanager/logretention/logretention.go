// Package logretention deletes aggregated application logs once they are older than
// yarn.log-aggregation.retain-seconds, as Hadoop's AggregatedLogDeletionService does:
// every retain-check-interval-seconds (a tenth of retain-seconds when unset) it walks
// every place an application's logs may be (<remote-app-log-dir>/<user>/<suffix>/<app>,
// and Hadoop 3.3+'s <...>/<user>/bucket-<suffix>/<bucket>/<app>: aggregatedlog.SweepLocations)
// and removes the directory of an application that is not running and whose files were all
// last written before the cut-off. It runs in the ResourceManager, which knows which
// applications still run.
package logretention

import (
	"context"
	"errors"
	"fmt"
	"os/user"
	"path"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/yarn/aggregatedlog"
	"github.com/bobbin-yarn/bobbin/yarn/remotefs"
)

// Settings are the retention keys and where the aggregated logs are.
type Settings struct {
	FS, Root  string                   // yarn.nodemanager.remote-app-log-dir, resolved
	Locations []aggregatedlog.Location // the layouts and suffixes to look under
	Retain    time.Duration            // yarn.log-aggregation.retain-seconds (< 0: kept forever)
	Interval  time.Duration            // how often to look
}

// ReadSettings reads the keys; on is false when aggregated logs are never deleted (log
// aggregation off, or a negative retain-seconds).
func ReadSettings(c *conf.Configuration) (s Settings, on bool, err error) {
	enabled, err := c.Bool("yarn.log-aggregation-enable")
	if err != nil {
		return s, false, err
	}
	if s.Retain, err = c.Duration("yarn.log-aggregation.retain-seconds", time.Second); err != nil {
		return s, false, err
	}
	if !enabled || s.Retain < 0 {
		return s, false, nil
	}
	if s.Interval, err = c.Duration("yarn.log-aggregation.retain-check-interval-seconds", time.Second); err != nil {
		return s, false, err
	}
	if s.Interval <= 0 {
		s.Interval = max(s.Retain/10, time.Second)
	}
	if s.Locations, s.FS, s.Root, err = aggregatedlog.Remote(c); err != nil {
		return s, false, err
	}
	return s, true, nil
}

// Deleter removes expired aggregated logs.
type Deleter struct {
	Conf     *conf.Configuration
	Settings Settings
	// Running reports whether an application still runs (its logs are kept whatever
	// their age).
	Running func(records.ApplicationID) bool
	Log     *logrus.Entry
	Now     func() time.Time
}

// Run sweeps every interval until ctx ends.
func (d *Deleter) Run(ctx context.Context) {
	t := time.NewTicker(d.Settings.Interval)
	defer t.Stop()
	for {
		d.sweepAndLog()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (d *Deleter) sweepAndLog() {
	deleted, err := d.Sweep()
	if err != nil {
		d.Log.WithError(err).Warn("aggregated log retention: sweep incomplete")
	}
	for _, dir := range deleted {
		d.Log.WithField("dir", dir).Info("aggregated logs deleted after yarn.log-aggregation.retain-seconds")
	}
}

// Sweep deletes the expired applications' log directories once and returns them.
func (d *Deleter) Sweep() (deleted []string, err error) {
	s := d.Settings
	owner := "yarn"
	if u, err := user.Current(); err == nil {
		owner = u.Username
	}
	fs, err := remotefs.Open(d.Conf, s.FS, owner)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	cutoff := d.Now().Add(-s.Retain)
	users, err := fs.ReadDir(s.Root)
	if errors.Is(err, remotefs.ErrNotExist) {
		return nil, nil // nothing aggregated yet
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fs.URI(s.Root), err)
	}
	var errs []error
	for _, u := range users {
		if !u.IsDir() {
			continue
		}
		for _, l := range s.Locations {
			base := l.UserDir(s.Root, u.Name())
			if !l.Bucketed {
				got, err := d.sweepApps(fs, base, cutoff)
				deleted, errs = append(deleted, got...), append(errs, err)
				continue
			}
			buckets, err := fs.ReadDir(base)
			if err != nil && !errors.Is(err, remotefs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("%s: %w", fs.URI(base), err))
			}
			for _, b := range buckets {
				if b.IsDir() {
					got, err := d.sweepApps(fs, path.Join(base, b.Name()), cutoff)
					deleted, errs = append(deleted, got...), append(errs, err)
				}
			}
		}
	}
	return deleted, errors.Join(errs...)
}

// sweepApps deletes the expired application directories in base, the directory that
// holds them.
func (d *Deleter) sweepApps(fs remotefs.FS, base string, cutoff time.Time) (deleted []string, err error) {
	apps, err := fs.ReadDir(base)
	if errors.Is(err, remotefs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fs.URI(base), err)
	}
	var errs []error
	for _, a := range apps {
		id, perr := records.ParseApplicationID(a.Name())
		if !a.IsDir() || perr != nil || a.ModTime().After(cutoff) || d.Running(id) {
			continue
		}
		dir := path.Join(base, a.Name())
		files, err := fs.ReadDir(dir)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", fs.URI(dir), err))
			continue
		}
		fresh := false
		for _, f := range files {
			if f.ModTime().After(cutoff) {
				fresh = true
			}
		}
		if fresh {
			continue
		}
		if err := fs.RemoveAll(dir); err != nil {
			errs = append(errs, fmt.Errorf("delete %s: %w", fs.URI(dir), err))
			continue
		}
		deleted = append(deleted, fs.URI(dir))
	}
	return deleted, errors.Join(errs...)
}
