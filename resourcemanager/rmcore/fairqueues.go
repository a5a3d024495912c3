package rmcore

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/bobbin-yarn/bobbin/conf/capacity"
)

// placeSubmission is the queue a submission goes to: the Capacity Scheduler's queue
// mappings, or the Fair Scheduler's placement policy, which may create the queue (a leaf
// of weight 1, as the Fair Scheduler creates it). mapped reports a queue other than the
// one named.
func (rm *Core) placeSubmission(user, requested string) (queue string, mapped bool, err error) {
	t := rm.Queues()
	groups := func() []string { return rm.UserGroups(user) }
	if t.Placement == nil {
		return t.PlaceSubmission(user, requested, groups)
	}
	queue, create, err := t.Placement(user, requested, groups)
	if err != nil {
		return "", false, err
	}
	if create {
		if err := rm.createFairQueue(queue); err != nil {
			return "", false, fmt.Errorf("queue %s not created: %w", queue, err)
		}
		rm.log.WithFields(map[string]any{"user": user, "queue": queue}).Info("queue created by the placement policy")
	}
	return queue, queue != requested, nil
}

// createFairQueue adds a queue the placement policy named to the Fair Scheduler's tree.
func (rm *Core) createFairQueue(path string) error {
	rm.queueWrite.Lock()
	defer rm.queueWrite.Unlock()
	t := rm.Queues()
	if _, ok := t.Queue(path); ok {
		return nil // another submission created it first
	}
	tree, err := capacity.LoadFair(rm.opts.Conf, rm.opts.ConfDir, append(slices.Clone(t.FairCreated), path))
	if err != nil {
		return err
	}
	return rm.applyQueues(tree)
}

// ensureFairQueue creates, under the Fair Scheduler, a queue a recovered application
// names that its placement policy had created before the restart (created queues live
// in memory only, as in the Java RM, which creates them again the same way).
func (rm *Core) ensureFairQueue(queue string) {
	t := rm.Queues()
	if !t.Fair {
		return
	}
	if _, ok := t.Queue(queue); ok {
		return
	}
	if err := rm.createFairQueue(queue); err != nil {
		rm.log.WithError(err).WithField("queue", queue).Warn("queue of a recovered application not created")
	}
}

// FairReloadInterval is how often the RM looks at the Fair Scheduler's allocation file, as
// the Java RM's AllocationFileLoaderService does (RELOAD_INTERVAL_MS); a change is applied
// once the file has been still for fairReloadWait (ALLOC_RELOAD_WAIT_MS).
const (
	FairReloadInterval = 10 * time.Second
	fairReloadWait     = 5 * time.Second
)

// watchFairFile reloads the allocation file when it changes, until ctx ends. A file that
// no longer reads is logged and the queues stay as they were, as in the Java RM.
func (rm *Core) watchFairFile(ctx context.Context, every time.Duration) {
	path, err := capacity.FairFile(rm.opts.Conf, rm.opts.ConfDir)
	if err != nil {
		return
	}
	modTime := func() time.Time {
		if st, err := os.Stat(path); err == nil {
			return st.ModTime()
		}
		return time.Time{}
	}
	loaded := modTime()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		m := modTime()
		if m.Equal(loaded) || time.Since(m) < min(fairReloadWait, every/2) {
			continue // unchanged, or still being written
		}
		loaded = m
		log := rm.log.WithField("file", path)
		if err := rm.RefreshQueues(); err != nil {
			log.WithError(err).Warn("allocation file not reloaded; the queues stay as they were")
			continue
		}
		log.Info("allocation file reloaded")
	}
}
