// Package authz holds the authorization rules both daemons apply to their IPC callers,
// as Hadoop's security package does: user-to-groups mapping with its cache, service-level
// authorization (hadoop.security.authorization with hadoop-policy.xml's per-protocol
// ACLs) and proxy users (hadoop.proxyuser.*). Each is reloadable, for the `yarn rmadmin`
// refresh calls that name them.
package authz

import (
	"os/user"
	"sync"
	"time"
)

// Groups maps users to their groups from the local system, as Hadoop's default
// ShellBasedUnixGroupsMapping does, and caches each answer for
// hadoop.security.groups.cache.secs; Refresh (`rmadmin -refreshUserToGroupsMappings`)
// drops the cache.
type Groups struct {
	ttl    time.Duration
	now    func() time.Time
	lookup func(string) []string

	mu    sync.Mutex
	cache map[string]groupsEntry
}

type groupsEntry struct {
	groups []string
	at     time.Time
}

// NewGroups returns a mapping that caches answers for ttl (0: no cache).
func NewGroups(ttl time.Duration, now func() time.Time) *Groups {
	if now == nil {
		now = time.Now
	}
	return &Groups{ttl: ttl, now: now, lookup: SystemGroups, cache: map[string]groupsEntry{}}
}

// Of returns user's groups (none for an unknown user).
func (g *Groups) Of(name string) []string {
	if g == nil {
		return SystemGroups(name)
	}
	now := g.now()
	g.mu.Lock()
	e, ok := g.cache[name]
	g.mu.Unlock()
	if ok && now.Sub(e.at) < g.ttl {
		return e.groups
	}
	groups := g.lookup(name)
	if g.ttl > 0 {
		g.mu.Lock()
		g.cache[name] = groupsEntry{groups: groups, at: now}
		g.mu.Unlock()
	}
	return groups
}

// Refresh forgets every cached answer.
func (g *Groups) Refresh() {
	g.mu.Lock()
	g.cache = map[string]groupsEntry{}
	g.mu.Unlock()
}

// SystemGroups resolves a user's groups from the local system (primary group first).
func SystemGroups(name string) []string {
	u, err := user.Lookup(name)
	if err != nil {
		return nil
	}
	ids, err := u.GroupIds()
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(ids))
	if g, err := user.LookupGroupId(u.Gid); err == nil {
		out = append(out, g.Name)
	}
	for _, id := range ids {
		if id == u.Gid {
			continue
		}
		if g, err := user.LookupGroupId(id); err == nil {
			out = append(out, g.Name)
		}
	}
	return out
}
