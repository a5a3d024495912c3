// Package kerberos holds the Kerberos pieces both daemons use: principal names and
// Hadoop's auth_to_local rules that map them to local user names (KerberosName).
package kerberos

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Name is a Kerberos principal split as Hadoop's KerberosName splits it:
// service[/host][@REALM].
type Name struct {
	Service, Host, Realm string
}

var nameParser = regexp.MustCompile(`^([^/@]+)(/([^/@]+))?(@([^/@]+))?$`)

// ParseName splits a principal; a name with more than one '/' or '@' is malformed.
func ParseName(s string) (Name, error) {
	m := nameParser.FindStringSubmatch(s)
	if m == nil {
		if strings.Contains(s, "@") {
			return Name{}, fmt.Errorf("Malformed Kerberos name: %s", s)
		}
		return Name{Service: s}, nil
	}
	return Name{Service: m[1], Host: m[3], Realm: m[5]}, nil
}

func (n Name) String() string {
	s := n.Service
	if n.Host != "" {
		s += "/" + n.Host
	}
	if n.Realm != "" {
		s += "@" + n.Realm
	}
	return s
}

// ErrNoMatchingRule is the NoMatchingRule of Hadoop: no rule maps the principal.
var ErrNoMatchingRule = errors.New("no auth_to_local rule applies")

// Rules are hadoop.security.auth_to_local, parsed.
type Rules struct {
	rules        []rule
	defaultRealm string
}

type rule struct {
	source     string
	isDefault  bool
	components int
	format     string
	match      *regexp.Regexp // nil: any
	from       *regexp.Regexp // nil: no substitution
	to         string         // a Go Expand template
	global     bool
	lower      bool
}

// ruleParser is KerberosName.ruleParser.
var ruleParser = regexp.MustCompile(`^\s*((DEFAULT)|(RULE:\[(\d*):([^\]]*)](\(([^)]*)\))?(s/([^/]*)/([^/]*)/(g)?)?))/?(L)?`)

// ParseRules parses hadoop.security.auth_to_local ("" means DEFAULT) for a realm whose
// default is defaultRealm (krb5.conf's default_realm).
func ParseRules(s, defaultRealm string) (*Rules, error) {
	r := &Rules{defaultRealm: defaultRealm}
	rest := strings.TrimSpace(s)
	if rest == "" {
		rest = "DEFAULT"
	}
	for rest != "" {
		m := ruleParser.FindStringSubmatchIndex(rest)
		if m == nil {
			return nil, fmt.Errorf("Invalid rule: %s", rest)
		}
		g := func(i int) string {
			if m[2*i] < 0 {
				return ""
			}
			return rest[m[2*i]:m[2*i+1]]
		}
		ru := rule{source: strings.TrimSpace(rest[:m[1]]), lower: g(12) == "L"}
		if g(2) != "" {
			ru.isDefault = true
		} else {
			n, err := strconv.Atoi(g(4))
			if err != nil {
				return nil, fmt.Errorf("Invalid rule: %s", rest)
			}
			ru.components, ru.format = n, g(5)
			var err2 error
			if m[2*7] >= 0 {
				if ru.match, err2 = regexp.Compile("^(?:" + g(7) + ")$"); err2 != nil {
					return nil, fmt.Errorf("Invalid rule: %s: %v", ru.source, err2)
				}
			}
			if m[2*8] >= 0 {
				if ru.from, err2 = regexp.Compile(g(9)); err2 != nil {
					return nil, fmt.Errorf("Invalid rule: %s: %v", ru.source, err2)
				}
				ru.to, ru.global = javaReplacement(g(10)), g(11) == "g"
			}
		}
		r.rules = append(r.rules, ru)
		rest = strings.TrimSpace(rest[m[1]:])
	}
	return r, nil
}

// javaReplacement turns a java.util.regex replacement ($1, \$) into a Go Expand template.
func javaReplacement(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s):
			i++
			if s[i] == '$' {
				b.WriteString("$$")
			} else {
				b.WriteByte(s[i])
			}
		case c == '$':
			j := i + 1
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if j == i+1 {
				b.WriteString("$$")
				continue
			}
			b.WriteString("${" + s[i+1:j] + "}")
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// ShortName maps a principal to a local user name with the rules, as
// KerberosName.getShortName: a name without realm is already short; otherwise the first
// rule that applies decides, and a result with '/' or '@' in it is refused.
func (r *Rules) ShortName(principal string) (string, error) {
	n, err := ParseName(principal)
	if err != nil {
		return "", err
	}
	var params []string
	switch {
	case n.Host == "" && n.Realm == "":
		return n.Service, nil
	case n.Host == "":
		params = []string{n.Realm, n.Service}
	default:
		params = []string{n.Realm, n.Service, n.Host}
	}
	for _, ru := range r.rules {
		res, ok, err := ru.apply(params, r.defaultRealm)
		if err != nil {
			return "", err
		}
		if ok {
			return res, nil
		}
	}
	return "", fmt.Errorf("%w: No rules applied to %s", ErrNoMatchingRule, n)
}

func (ru rule) apply(params []string, defaultRealm string) (string, bool, error) {
	var res string
	ok := false
	switch {
	case ru.isDefault:
		if params[0] == defaultRealm {
			res, ok = params[1], true
		}
	case len(params)-1 == ru.components:
		base, err := replaceParameters(ru.format, params)
		if err != nil {
			return "", false, err
		}
		if ru.match == nil || ru.match.MatchString(base) {
			res, ok = base, true
			if ru.from != nil {
				res = substitute(ru.from, base, ru.to, ru.global)
			}
		}
	}
	if !ok {
		return "", false, nil
	}
	if strings.ContainsAny(res, "/@") {
		return "", false, fmt.Errorf("%w: Non-simple name %s after auth_to_local rule %s", ErrNoMatchingRule, res, ru.source)
	}
	if ru.lower {
		res = strings.ToLower(res)
	}
	return res, true, nil
}

var paramRef = regexp.MustCompile(`\$(\d+)`)

// replaceParameters fills $0 (realm), $1, $2 (the components) into a rule's format.
func replaceParameters(format string, params []string) (string, error) {
	var err error
	out := paramRef.ReplaceAllStringFunc(format, func(ref string) string {
		i, _ := strconv.Atoi(ref[1:])
		if i >= len(params) {
			err = fmt.Errorf("index %d from %s is outside of the valid range 0 to %d", i, format, len(params)-1)
			return ref
		}
		return params[i]
	})
	return out, err
}

// substitute is sed's s/from/to/ (all matches with g, else the first).
func substitute(from *regexp.Regexp, base, to string, global bool) string {
	if global {
		return from.ReplaceAllString(base, to)
	}
	loc := from.FindStringSubmatchIndex(base)
	if loc == nil {
		return base
	}
	var dst []byte
	dst = from.ExpandString(dst, to, base, loc)
	return base[:loc[0]] + string(dst) + base[loc[1]:]
}
