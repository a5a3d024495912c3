package authz

import (
	"strings"
	"testing"

	"github.com/bobbin-yarn/bobbin/conf"
)

// The static overrides answer before any lookup; a group mapping Bobbin does not
// implement refuses, naming the key.
func TestGroupsFromConf(t *testing.T) {
	c := conf.New()
	c.Set("hadoop.user.group.static.mapping.overrides", "carol=etl,ops; dave=;")
	g, err := GroupsFromConf(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Of("carol"); len(got) != 2 || got[0] != "etl" || got[1] != "ops" {
		t.Fatalf("carol: %v", got)
	}
	if got := g.Of("dave"); len(got) != 0 {
		t.Fatalf("dave: %v", got)
	}
	if got := g.Of("root"); len(got) == 0 || got[0] != "root" {
		t.Fatalf("root, from the system: %v", got)
	}
	c.Set("hadoop.security.group.mapping", "org.apache.hadoop.security.LdapGroupsMapping")
	if _, err := GroupsFromConf(c, nil); err == nil || !strings.Contains(err.Error(), "hadoop.security.group.mapping") {
		t.Fatalf("LDAP mapping: %v", err)
	}
	c.Set("hadoop.security.group.mapping", "org.apache.hadoop.security.JniBasedUnixGroupsMappingWithFallback")
	c.Set("hadoop.user.group.static.mapping.overrides", "nobody")
	if _, err := GroupsFromConf(c, nil); err == nil || !strings.Contains(err.Error(), "static.mapping.overrides") {
		t.Fatalf("bad override: %v", err)
	}
}
