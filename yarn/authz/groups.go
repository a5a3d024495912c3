// Package authz holds the authorization rules both daemons apply to their IPC callers,
// as Hadoop's security package does: user-to-groups mapping with its cache, service-level
// authorization (hadoop.security.authorization with hadoop-policy.xml's per-protocol
// ACLs) and proxy users (hadoop.proxyuser.*). Each is reloadable, for the `yarn rmadmin`
// refresh calls that name them.
package authz

import (
	"fmt"
	"os/user"
	"strings"
	"sync"
	"time"

	metrics "github.com/rcrowley/go-metrics"

	"github.com/bobbin-yarn/bobbin/conf"
)

// Groups maps users to their groups from the local system, as Hadoop's default
// ShellBasedUnixGroupsMapping does, and caches each answer for
// hadoop.security.groups.cache.secs; Refresh (`rmadmin -refreshUserToGroupsMappings`)
// drops the cache.
type Groups struct {
	ttl    time.Duration
	now    func() time.Time
	lookup func(string) []string
	// static are hadoop.user.group.static.mapping.overrides: users whose groups are
	// given in the configuration, never looked up.
	static map[string][]string
	// lookups times the lookups that reach the system (cache misses): UgiMetrics'
	// GetGroups.
	lookups metrics.Timer

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
	return &Groups{ttl: ttl, now: now, lookup: SystemGroups, lookups: metrics.NewTimer(), cache: map[string]groupsEntry{}}
}

// TimeLookups times the lookups in reg's "ugi.GetGroups" timer (shared by every mapping
// of the daemon, as Java's UgiMetrics are the process's), before the mapping is used.
func (g *Groups) TimeLookups(reg metrics.Registry) *Groups {
	if reg != nil {
		g.lookups = metrics.GetOrRegisterTimer(UgiGetGroups, reg)
	}
	return g
}

// UgiGetGroups is the daemon's registry's timer of group lookups (UgiMetrics'
// GetGroups).
const UgiGetGroups = "ugi.GetGroups"

// localGroupMapping reports whether class is one of the group mappings Hadoop ships that
// resolve groups from the local system, as Groups does; any other
// hadoop.security.group.mapping (LDAP, composite, netgroups) is refused.
func localGroupMapping(class string) bool {
	switch class {
	case "org.apache.hadoop.security.ShellBasedUnixGroupsMapping",
		"org.apache.hadoop.security.JniBasedUnixGroupsMapping",
		"org.apache.hadoop.security.JniBasedUnixGroupsMappingWithFallback":
		return true
	}
	return false
}

// GroupsFromConf is the user-to-groups mapping c configures: answers cached for
// hadoop.security.groups.cache.secs, the hadoop.user.group.static.mapping.overrides
// ("user=group1,group2;user2=;", Hadoop's default "dr.who=;") before any lookup, and the
// local system's groups, the only hadoop.security.group.mapping Bobbin implements.
func GroupsFromConf(c *conf.Configuration, now func() time.Time) (*Groups, error) {
	ttl, err := c.Duration("hadoop.security.groups.cache.secs", time.Second)
	if err != nil {
		return nil, err
	}
	if class, err := c.Trimmed("hadoop.security.group.mapping"); err != nil {
		return nil, err
	} else if class != "" && !localGroupMapping(class) {
		return nil, &conf.ValueError{Source: c.Source("hadoop.security.group.mapping"), Key: "hadoop.security.group.mapping", Value: class,
			Reason: "Bobbin maps users to groups from the local system only (ShellBasedUnixGroupsMapping or JniBasedUnixGroupsMappingWithFallback); " +
				"give fixed groups with hadoop.user.group.static.mapping.overrides"}
	}
	g := NewGroups(ttl, now)
	raw, set, err := c.Lookup("hadoop.user.group.static.mapping.overrides")
	if err != nil {
		return nil, err
	}
	if !set {
		raw = "dr.who=;" // Hadoop's default
	}
	for _, entry := range strings.Split(raw, ";") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		u, groups, ok := strings.Cut(entry, "=")
		if !ok || strings.TrimSpace(u) == "" {
			return nil, &conf.ValueError{Source: c.Source("hadoop.user.group.static.mapping.overrides"), Key: "hadoop.user.group.static.mapping.overrides",
				Value: raw, Reason: fmt.Sprintf("entry %q is not user=group1,group2", entry)}
		}
		var list []string
		for _, gr := range strings.Split(groups, ",") {
			if gr = strings.TrimSpace(gr); gr != "" {
				list = append(list, gr)
			}
		}
		if g.static == nil {
			g.static = map[string][]string{}
		}
		g.static[strings.TrimSpace(u)] = list
	}
	return g, nil
}

// Of returns user's groups (none for an unknown user).
func (g *Groups) Of(name string) []string {
	if g == nil {
		return SystemGroups(name)
	}
	if groups, ok := g.static[name]; ok {
		return groups
	}
	now := g.now()
	g.mu.Lock()
	e, ok := g.cache[name]
	g.mu.Unlock()
	if ok && now.Sub(e.at) < g.ttl {
		return e.groups
	}
	start := time.Now()
	groups := g.lookup(name)
	g.lookups.UpdateSince(start)
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
