package capacity

import (
	"strings"
	"testing"
)

func mappingTree(t *testing.T, mappings string, override string) *Tree {
	t.Helper()
	c := confWith("root.queues", "default,analytics,etl,bob,ops", "root.default.capacity", "20", "root.analytics.capacity", "20",
		"root.etl.capacity", "20", "root.bob.capacity", "20", "root.ops.capacity", "20")
	c.Set(KeyQueueMappings, mappings)
	if override != "" {
		c.Set(KeyQueueMappingsOverride, override)
	}
	tr, err := Parse(c)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// The mappings: alice by name, members of etl by group, everyone else to the
// queue named after them; only submissions to "default" are placed unless override.
func TestQueueMappingsPlaceSubmissions(t *testing.T) {
	groups := map[string][]string{"carol": {"etl"}, "bob": {"staff"}, "erin": {"staff", "ops"}}
	place := func(tr *Tree, user, requested string) string {
		q, _, err := tr.PlaceSubmission(user, requested, func() []string { return groups[user] })
		if err != nil {
			return err.Error()
		}
		return q
	}
	tr := mappingTree(t, "u:alice:analytics, g:etl:etl, u:%user:%user", "")
	for _, c := range []struct{ user, requested, want string }{
		{"alice", "default", "analytics"}, {"alice", "", "analytics"}, {"carol", "default", "etl"},
		{"bob", "default", "bob"},
		{"dave", "default", "No groups found for user dave"}, // the group mapping needs them, as in Java
		{"bob", "analytics", "analytics"},                    // no override: a named queue stays
	} {
		if got := place(tr, c.user, c.requested); got != c.want {
			t.Errorf("%s to %q: %s, want %s", c.user, c.requested, got, c.want)
		}
	}
	over := mappingTree(t, "u:alice:analytics,g:etl:etl,u:%user:%user", "true")
	if got := place(over, "bob", "analytics"); got != "bob" {
		t.Errorf("override: bob to analytics went to %s, want bob", got)
	}
	pg := mappingTree(t, "u:%user:%primary_group", "")
	if got := place(pg, "bob", "default"); got != "staff" {
		t.Errorf("%%primary_group: %s", got)
	}
	sg := mappingTree(t, "u:%user:%secondary_group,u:%user:default", "")
	if got, got2 := place(sg, "erin", "default"), place(sg, "bob", "default"); got != "ops" || got2 != "default" {
		t.Errorf("%%secondary_group: erin %s (want ops), bob %s (want default)", got, got2)
	}
	if got := place(mappingTree(t, "u:%user:%user", ""), "dave", ""); got != "dave" {
		t.Errorf("%%user needs no groups: %s", got)
	}
	if got := place(mappingTree(t, "", ""), "alice", ""); got != "default" {
		t.Errorf("no mappings, no queue named: %s", got)
	}
}

func TestQueueMappingErrorsNameTheKey(t *testing.T) {
	for mappings, want := range map[string]string{
		"u:alice":            "Illegal queue mapping u:alice",
		"x:alice:analytics":  "Illegal queue mapping x:alice:analytics",
		"u:alice:nosuch":     "mapping contains invalid or non-leaf queue nosuch",
		"u:alice:root":       "mapping contains invalid or non-leaf queue root",
		"u:%user:root.%user": "auto-created queue",
		"g:%user:analytics":  "%user is not a group",
	} {
		c := confWith("root.queues", "default,analytics", "root.default.capacity", "50", "root.analytics.capacity", "50")
		c.Set(KeyQueueMappings, mappings)
		_, err := Parse(c)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), KeyQueueMappings) {
			t.Errorf("%s: %v", mappings, err)
		}
	}
	c := confWith("root.queues", "default", "root.default.capacity", "100")
	c.Set(KeyQueueMappingsOverride, "sometimes")
	if _, err := Parse(c); err == nil || !strings.Contains(err.Error(), KeyQueueMappingsOverride) {
		t.Errorf("override: %v", err)
	}
}
