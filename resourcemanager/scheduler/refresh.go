package scheduler

import (
	"fmt"

	"github.com/bobbin-yarn/bobbin/conf/capacity"
)

// Refresh replaces the queue tree and the groups' settings at run time (yarn rmadmin
// -refreshQueues) without touching running containers: groups that stay keep their
// applications, usage and preemption history. Removing a queue (or turning it into a
// parent) that still has applications is refused, and then nothing changes.
func (e *Engine) Refresh(tree *capacity.Tree, settings map[string]GroupSettings) error {
	e.lock()
	defer e.mu.Unlock()
	byPath := map[string]*group{}
	for _, g := range e.leaves {
		byPath[g.queue.Path] = g
	}
	// Build everything first so a failure leaves the engine as it was.
	qt, err := newQueueTree(e.cfg.Types, tree)
	if err != nil {
		return err
	}
	newLeaves := map[string]*queue{}
	for _, q := range qt.leaves {
		newLeaves[q.Path] = q
	}
	for path, g := range byPath {
		if _, ok := newLeaves[path]; !ok && len(g.apps) > 0 {
			return fmt.Errorf("queue %s has %d applications and cannot be removed or made a parent", path, len(g.apps))
		}
	}
	leaves := make([]*group, 0, len(newLeaves))
	groups := map[string]*group{}
	for _, q := range qt.leaves {
		fresh, err := buildGroup(e.cfg.Types, q, settings[q.Path], tree.Fair)
		if err != nil {
			return err
		}
		g := fresh
		if old, ok := byPath[q.Path]; ok {
			// Keep the live state; take the new definition and settings.
			old.queue, old.name = q, q.Name
			old.quota, old.absQuota, old.maxRes, old.fair = fresh.quota, fresh.absQuota, fresh.maxRes, fresh.fair
			old.policy, old.backfill, old.preemptionPolicy, old.schedule = fresh.policy, fresh.backfill, fresh.preemptionPolicy, fresh.schedule
			g = old
		}
		leaves = append(leaves, g)
		groups[q.Name] = g
		groups[q.Path] = g
	}
	for _, q := range qt.all {
		if !q.IsLeaf() {
			groups[q.Path] = nil
			if _, ok := groups[q.Name]; !ok {
				groups[q.Name] = nil
			}
		}
	}
	e.leaves, e.groups = leaves, groups
	rankNames(e.leaves)
	e.cfg.Groups = settings
	e.userMaxRunning = tree.UserMaxRunning
	e.setFairRoot(qt, tree.Fair)
	return nil
}
