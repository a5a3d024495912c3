package webapp

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/bobbin-yarn/bobbin/conf"
)

// KeySensitive is the list of regular expressions of the keys /conf redacts.
const KeySensitive = "hadoop.security.sensitive-config-keys"

// Redacted is what /conf shows for a sensitive value (Hadoop 3's ConfigRedactor).
const Redacted = "<redacted>"

// bobbinSensitive are redacted whatever the list says: keys holding credentials that
// Hadoop's default list lets through (fs.s3a.session.token, hadoop.zk.auth,
// yarn.resourcemanager.zk-auth).
var bobbinSensitive = []string{`token$`, `zk\.auth$`, `zk-auth$`}

// Redactor is Hadoop's ConfigRedactor: a key is sensitive when one of the expressions is
// found in it.
type Redactor struct {
	res []*regexp.Regexp
}

// NewRedactor compiles hadoop.security.sensitive-config-keys (Hadoop's default list when
// unset) and Bobbin's additions; an expression that does not compile is an error naming
// the key.
func NewRedactor(c *conf.Configuration) (*Redactor, error) {
	list, source := defaultSensitive(), conf.SourceDefault
	if c != nil {
		source = c.Source(KeySensitive)
		v, err := c.Get(KeySensitive)
		if err != nil {
			return nil, err
		}
		list = v
	}
	r := &Redactor{}
	for _, e := range append(strings.Split(list, ","), bobbinSensitive...) {
		if e = strings.TrimSpace(e); e == "" {
			continue
		}
		re, err := regexp.Compile(e)
		if err != nil {
			return nil, &conf.ValueError{Source: source, Key: KeySensitive, Value: list, Reason: fmt.Sprintf("%q: %v", e, err)}
		}
		r.res = append(r.res, re)
	}
	return r, nil
}

func defaultSensitive() string {
	for _, d := range conf.Defaults {
		if d.Key == KeySensitive {
			return d.Value
		}
	}
	return ""
}

// Redact is value, or Redacted when key is sensitive.
func (r *Redactor) Redact(key, value string) string {
	for _, re := range r.res {
		if re.MatchString(key) {
			return Redacted
		}
	}
	return value
}

// redactor is the daemon's Redactor, Hadoop's default one when none was given.
func (d *Daemon) redactor() *Redactor {
	if d.Redact != nil {
		return d.Redact
	}
	r, err := NewRedactor(nil)
	if err != nil {
		panic("webapp: the default sensitive-key list does not compile: " + err.Error()) // compiled in: a build defect
	}
	return r
}
