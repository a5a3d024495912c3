package kerberos

import (
	"errors"
	"testing"
)

// The cases of Hadoop's TestKerberosName: rules with formats, matches, substitutions,
// lower-casing and DEFAULT, and the names and translations Hadoop refuses.
func TestAuthToLocal(t *testing.T) {
	rules, err := ParseRules(`RULE:[1:$1@$0](.*@YAHOO\.COM)s/@.*//
RULE:[2:$1](johndoe)s/^.*$/guest/
RULE:[2:$1;$2](^.*;admin$)s/;admin$//
RULE:[2:$2](root)
DEFAULT`, "APACHE.ORG")
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"omalley@APACHE.ORG":       "omalley",
		"hdfs/10.0.0.1@APACHE.ORG": "hdfs",
		"oom@YAHOO.COM":            "oom",
		"johndoe/zoo@FOO.COM":      "guest",
		"joe/admin@FOO.COM":        "joe",
		"joe/root@FOO.COM":         "root",
		"plain":                    "plain",
	} {
		if got, err := rules.ShortName(in); err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"owen/owen/owen@FOO.COM", "owen@foo/bar.com"} {
		if _, err := rules.ShortName(bad); err == nil {
			t.Errorf("%s: accepted as a name", bad)
		}
	}
	for _, untranslatable := range []string{"foo@ACME.COM", "root/joe@FOO.COM"} {
		if got, err := rules.ShortName(untranslatable); !errors.Is(err, ErrNoMatchingRule) {
			t.Errorf("%s: %q %v, want no matching rule", untranslatable, got, err)
		}
	}

	lower, err := ParseRules(`RULE:[1:$1]/L
RULE:[2:$1]/L
RULE:[2:$1;$2](^.*;admin$)s/;admin$///L
RULE:[2:$1;$2](^.*;guest$)s/;guest$//g/L
DEFAULT`, "FOO.COM")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"Joe@FOO.COM", "Joe/root@FOO.COM", "Joe/admin@FOO.COM", "Joe/guestguest@FOO.COM"} {
		if got, err := lower.ShortName(in); err != nil || got != "joe" {
			t.Errorf("%s: %q %v, want joe", in, got, err)
		}
	}
}

func TestAuthToLocalEdges(t *testing.T) {
	// Empty is DEFAULT; a result with '/' or '@' is refused; sed's $1 and g work.
	def, err := ParseRules("", "EXAMPLE.COM")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := def.ShortName("nm/host1.example.com@EXAMPLE.COM"); err != nil || got != "nm" {
		t.Fatalf("DEFAULT: %q %v", got, err)
	}
	keep, _ := ParseRules("RULE:[2:$1/$2]", "EXAMPLE.COM")
	if _, err := keep.ShortName("nm/host@EXAMPLE.COM"); !errors.Is(err, ErrNoMatchingRule) {
		t.Fatalf("non-simple result: %v", err)
	}
	groups, _ := ParseRules(`RULE:[1:$1](.*)s/(a)(b)/$2$1/g`, "X")
	if got, err := groups.ShortName("abab@X"); err != nil || got != "baba" {
		t.Fatalf("groups with g: %q %v", got, err)
	}
	if _, err := ParseRules("RULE:[x:$1]", "X"); err == nil {
		t.Fatal("a malformed rule was accepted")
	}
	if _, err := ParseRules("RULE:[1:$3]", "X"); err != nil {
		t.Fatal(err)
	} else if r, _ := ParseRules("RULE:[1:$3]", "X"); func() error { _, err := r.ShortName("a@X"); return err }() == nil {
		t.Fatal("an out-of-range parameter was accepted")
	}
}

func TestServerPrincipal(t *testing.T) {
	for _, tc := range []struct{ configured, host, want string }{
		{"rm/_HOST@EXAMPLE.COM", "RM1.Example.com", "rm/rm1.example.com@EXAMPLE.COM"},
		{"rm/fixed.example.com@EXAMPLE.COM", "other", "rm/fixed.example.com@EXAMPLE.COM"},
		{"rm/_HOST@EXAMPLE.COM", "127.0.0.1", "rm/localhost@EXAMPLE.COM"},
	} {
		if got, err := ServerPrincipal(tc.configured, tc.host); err != nil || got != tc.want {
			t.Errorf("%s on %s: %q %v, want %q", tc.configured, tc.host, got, err, tc.want)
		}
	}
}
