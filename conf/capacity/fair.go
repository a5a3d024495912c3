package capacity

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/conf/fairscheduler"
)

// KeySchedulerClass is the RM's scheduler class; the Fair Scheduler's selects its
// allocation file instead of capacity-scheduler.xml.
const KeySchedulerClass = "yarn.resourcemanager.scheduler.class"

// UsesFairScheduler reports whether c names the Fair Scheduler's class.
func UsesFairScheduler(c *conf.Configuration) bool {
	v, _ := c.Get(KeySchedulerClass)
	return strings.TrimSpace(v) == fairscheduler.Class
}

// FairFile is the allocation file c names, resolved against the configuration directory
// (the Java RM finds a relative name on its classpath, which holds that directory).
func FairFile(c *conf.Configuration, dir string) (string, error) {
	path, err := c.Get(fairscheduler.KeyAllocationFile)
	if err != nil {
		return "", err
	}
	if path = strings.TrimSpace(path); path == "" {
		path = fairscheduler.DefaultAllocationXML
	}
	if !filepath.IsAbs(path) && dir != "" {
		path = filepath.Join(dir, path)
	}
	return path, nil
}

// LoadFair builds the tree from the Fair Scheduler's allocation file (see
// fairscheduler.Allocations.CapacityKeys for the mapping), with the queues the placement
// policy created so far. A missing file is no error, as for the Java RM: every queue then
// has the defaults, and the placement policy creates them.
func LoadFair(base *conf.Configuration, dir string, created []string) (*Tree, error) {
	path, err := FairFile(base, dir)
	if err != nil {
		return nil, err
	}
	var a *fairscheduler.Allocations
	if _, statErr := os.Stat(path); errors.Is(statErr, os.ErrNotExist) {
		if a, err = fairscheduler.Parse(path+" (absent: defaults)", []byte("<allocations/>")); err != nil {
			return nil, err
		}
	} else if a, err = fairscheduler.Load(path); err != nil {
		return nil, err
	}
	flag := func(key string, def bool) (bool, error) {
		v, ok, err := base.Lookup(key)
		if err != nil || !ok {
			return def, err
		}
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return false, &conf.ValueError{Source: base.Source(key), Key: key, Value: v, Reason: "not true or false"}
	}
	preemption, err1 := flag(fairscheduler.KeyPreemption, false)
	userAsDefault, err2 := flag(fairscheduler.KeyUserAsDefault, true)
	allowUndeclared, err3 := flag(fairscheduler.KeyAllowUndeclared, true)
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, err
	}
	keys, err := a.CapacityKeys(created, preemption)
	if err != nil {
		return nil, err
	}
	c := base.Clone()
	for k, v := range keys {
		c.Set(k, v)
	}
	t, err := Parse(c)
	if err != nil {
		return nil, fmt.Errorf("%s as queues: %w", path, err)
	}
	t.Source, t.Fair, t.FairCreated = path, true, created
	// The Fair Scheduler names queues by path ("root.a"), in reports and on the wire; the
	// short names stay as aliases, as it also takes "a" for root.a.
	for _, q := range t.Queues() {
		q.Name = q.Path
		t.byName[q.Path] = q
	}
	rules := a.Placement
	if rules == nil {
		rules = fairscheduler.DefaultRules(userAsDefault, allowUndeclared)
	}
	declared := a.Declared()
	for _, q := range created {
		declared[q] = true
	}
	t.Placement = func(user, requested string, groups func() []string) (string, bool, error) {
		return fairscheduler.Place(rules, user, requested, groups, func(q string) bool { return declared[q] })
	}
	return t, nil
}

// userRunningBounds reads the users' running-application bounds: the Capacity
// Scheduler's (3.3+) user.max-parallel-apps and user.<name>.max-parallel-apps, and the
// Bobbin keys the Fair Scheduler's <user> elements and userMaxAppsDefault become.
func (p *parser) userRunningBounds() {
	p.t.UserMaxRunningAppsDefault = p.count(Prefix+"user.max-parallel-apps", -1, 0)
	p.t.UserMaxRunningAppsDefault = p.count(Prefix+"bobbin.user-max-running-apps-default", p.t.UserMaxRunningAppsDefault, -1)
	p.t.UserMaxRunningApps = map[string]int{}
	for _, k := range p.c.Keys() {
		for _, form := range []struct {
			prefix, suffix string
			least          int
		}{{Prefix + "user.", ".max-parallel-apps", 0}, {Prefix + "bobbin.user.", ".max-running-apps", -1}} {
			if rest, ok := strings.CutPrefix(k, form.prefix); ok {
				if user, ok := strings.CutSuffix(rest, form.suffix); ok && user != "" {
					p.t.UserMaxRunningApps[user] = p.count(k, -1, form.least)
				}
			}
		}
	}
}

// maxParallel is the running-application bound of the queue at pre: its own
// max-parallel-apps (Hadoop 3.3+), else the default for every queue
// (yarn.scheduler.capacity.max-parallel-apps), else what the Fair Scheduler's allocation
// file set (bobbin.max-running-apps); -1: none.
func (p *parser) maxParallel(pre string) int {
	n := p.count(Prefix+"max-parallel-apps", -1, 0)
	n = p.count(pre+"bobbin.max-running-apps", n, -1)
	return p.count(pre+"max-parallel-apps", n, 0)
}

// count reads a whole number of applications, least or more (Hadoop's keys 0; Bobbin's
// also -1, no bound), def when unset.
func (p *parser) count(key string, def, least int) int {
	v, ok := p.lookup(key)
	if !ok || strings.TrimSpace(v) == "" {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < least {
		p.errorf(key, v, "must be a whole number of applications, 0 or more")
		return def
	}
	return n
}

// RunningBound is q's MaxRunningApps as the Java schedulers report it: Integer.MAX_VALUE
// when there is none.
func (q *Queue) RunningBound() int32 {
	if q.MaxRunningApps < 0 {
		return math.MaxInt32
	}
	return int32(min(q.MaxRunningApps, math.MaxInt32))
}

// UserMaxRunning is the running-application bound of user (-1: none).
func (t *Tree) UserMaxRunning(user string) int {
	if n, ok := t.UserMaxRunningApps[user]; ok {
		return n
	}
	return t.UserMaxRunningAppsDefault
}
