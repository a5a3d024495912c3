package conf

import (
	"fmt"
	"math"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// maxSubstitutions mirrors Hadoop's MAX_SUBST (20) as a second guard after loop detection.
const maxSubstitutions = 20

// ValueError reports a property whose value is unusable, naming where it came from.
type ValueError struct {
	Source, Key, Value, Reason string
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("conf: %s: %s = %q: %s", e.Source, e.Key, e.Value, e.Reason)
}

func (c *Configuration) valueError(key, value, reason string, args ...any) error {
	return &ValueError{Source: c.Source(key), Key: key, Value: value, Reason: fmt.Sprintf(reason, args...)}
}

// Lookup returns key's value with ${var} references expanded: other keys first, then the
// environment as ${env.NAME} (with ${env.NAME:-default} and ${env.NAME-default}), then the
// Java system properties configurations commonly use (user.name, java.io.tmpdir, ...).
// Unknown references stay as written, as in Hadoop. A reference loop is an error.
func (c *Configuration) Lookup(key string) (string, bool, error) {
	c.note(key)
	return c.lookup(key, []string{key})
}

// quiet heads the expansion stack of lookups that are not reads of the key (Validate):
// no key is named "", so it never matches a name, and resolve does not note them.
const quiet = ""

func (c *Configuration) lookup(key string, stack []string) (string, bool, error) {
	p, ok := c.props[key]
	if !ok {
		return "", false, nil
	}
	v, err := c.expand(p.value, stack)
	if err != nil {
		return "", true, c.valueError(key, p.value, "%v", err)
	}
	return v, true, nil
}

// Get returns the expanded value, "" when unset.
func (c *Configuration) Get(key string) (string, error) {
	v, _, err := c.Lookup(key)
	return v, err
}

func (c *Configuration) expand(s string, stack []string) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	if len(stack) > maxSubstitutions {
		return "", fmt.Errorf("variable substitution depth too large: %d", maxSubstitutions)
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		j := strings.IndexByte(s[i+2:], '}')
		if j < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		name := s[i+2 : i+2+j]
		b.WriteString(s[:i])
		s = s[i+3+j:]
		val, ok, err := c.resolve(name, stack)
		if err != nil {
			return "", err
		}
		if !ok {
			b.WriteString("${" + name + "}")
			continue
		}
		b.WriteString(val)
	}
}

func (c *Configuration) resolve(name string, stack []string) (string, bool, error) {
	if strings.HasPrefix(name, "env.") {
		envName, def, hasDef, emptyCounts := name[4:], "", false, false
		if k := strings.Index(envName, ":-"); k >= 0 {
			envName, def, hasDef, emptyCounts = envName[:k], envName[k+2:], true, true
		} else if k := strings.IndexByte(envName, '-'); k >= 0 {
			envName, def, hasDef = envName[:k], envName[k+1:], true
		}
		v, ok := c.env(envName)
		if ok && !(emptyCounts && v == "") {
			return v, true, nil
		}
		if hasDef {
			out, err := c.expand(def, stack)
			return out, true, err
		}
		return "", false, nil
	}
	if stack[0] != quiet {
		c.note(name)
	}
	if p, ok := c.props[name]; ok {
		for _, s := range stack {
			if s == name {
				return "", false, fmt.Errorf("variable loop: %s -> %s", strings.Join(stack, " -> "), name)
			}
		}
		v, err := c.expand(p.value, append(stack, name))
		return v, true, err
	}
	if v, ok := systemProperty(name); ok {
		return v, true, nil
	}
	return "", false, nil
}

// Validate expands every property once and returns every error, so a daemon refuses to
// start half-configured instead of failing on first use.
func (c *Configuration) Validate() error {
	var errs []string
	for _, k := range c.Keys() {
		if _, _, err := c.lookup(k, []string{quiet, k}); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

// Trimmed returns the expanded, trimmed value ("" when unset).
func (c *Configuration) Trimmed(key string) (string, error) {
	v, err := c.Get(key)
	return strings.TrimSpace(v), err
}

// required fetches a trimmed value that must be present and non-empty.
func (c *Configuration) required(key string) (string, error) {
	v, ok, err := c.Lookup(key)
	if err != nil {
		return "", err
	}
	v = strings.TrimSpace(v)
	if !ok || v == "" {
		return "", &ValueError{Source: c.Source(key), Key: key, Value: v, Reason: "no value set and no default"}
	}
	return v, nil
}

// Int returns an integer property (decimal, or hex with 0x as Hadoop's getInt allows).
func (c *Configuration) Int(key string) (int, error) {
	v, err := c.Int64(key)
	if err != nil {
		return 0, err
	}
	if v > math.MaxInt32 || v < math.MinInt32 {
		raw, _ := c.Raw(key)
		return 0, c.valueError(key, raw, "out of range for an integer")
	}
	return int(v), nil
}

// Int64 returns a long property.
func (c *Configuration) Int64(key string) (int64, error) {
	v, err := c.required(key)
	if err != nil {
		return 0, err
	}
	base := 10
	s := v
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		s, base = s[2:], 16
	}
	n, perr := strconv.ParseInt(s, base, 64)
	if perr != nil {
		return 0, c.valueError(key, v, "not an integer")
	}
	if neg {
		n = -n
	}
	return n, nil
}

// Float returns a floating-point property.
func (c *Configuration) Float(key string) (float64, error) {
	v, err := c.required(key)
	if err != nil {
		return 0, err
	}
	f, perr := strconv.ParseFloat(v, 64)
	if perr != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, c.valueError(key, v, "not a number")
	}
	return f, nil
}

// Bool returns a boolean property: true or false, any case.
func (c *Configuration) Bool(key string) (bool, error) {
	v, err := c.required(key)
	if err != nil {
		return false, err
	}
	switch strings.ToLower(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, c.valueError(key, v, "not true or false")
}

var durationUnits = []struct {
	suffix string
	unit   time.Duration
}{
	// Longest suffixes first so "ms" is not read as "s".
	{"ns", time.Nanosecond}, {"us", time.Microsecond}, {"ms", time.Millisecond},
	{"s", time.Second}, {"m", time.Minute}, {"h", time.Hour}, {"d", 24 * time.Hour},
}

// Duration returns a time duration as Hadoop's getTimeDuration reads it: a number with an
// optional unit suffix (ns, us, ms, s, m, h, d); a bare number is in defaultUnit.
func (c *Configuration) Duration(key string, defaultUnit time.Duration) (time.Duration, error) {
	v, err := c.required(key)
	if err != nil {
		return 0, err
	}
	num, unit := strings.ToLower(v), defaultUnit
	for _, u := range durationUnits {
		if strings.HasSuffix(num, u.suffix) {
			num, unit = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.unit
			break
		}
	}
	n, perr := strconv.ParseInt(num, 10, 64)
	if perr != nil {
		return 0, c.valueError(key, v, "not a duration (a number with an optional ns, us, ms, s, m, h or d suffix)")
	}
	if n != 0 && (n > math.MaxInt64/int64(unit) || n < math.MinInt64/int64(unit)) {
		return 0, c.valueError(key, v, "duration out of range")
	}
	return time.Duration(n) * unit, nil
}

// Size returns a byte size as Hadoop's getLongBytes reads it: a number with an optional
// binary prefix k, m, g, t, p or e (any case, optionally followed by "b").
func (c *Configuration) Size(key string) (int64, error) {
	v, err := c.required(key)
	if err != nil {
		return 0, err
	}
	s := strings.ToLower(v)
	s = strings.TrimSuffix(s, "b")
	mult := int64(1)
	if s != "" {
		if k := strings.IndexByte("kmgtpe", s[len(s)-1]); k >= 0 {
			mult = int64(1) << (10 * uint(k+1))
			s = s[:len(s)-1]
		}
	}
	n, perr := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if perr != nil {
		return 0, c.valueError(key, v, "not a size (a number with an optional k, m, g, t, p or e suffix)")
	}
	if n != 0 && (n > math.MaxInt64/mult || n < math.MinInt64/mult) {
		return 0, c.valueError(key, v, "size out of range")
	}
	return n * mult, nil
}

// HostPort returns a socket address as NetUtils.createSocketAddr reads it: "host:port",
// "host" (with defaultPort) or a URI "scheme://host:port/...". defaultPort < 0 means the
// port is required.
func (c *Configuration) HostPort(key string, defaultPort int) (string, int, error) {
	v, err := c.required(key)
	if err != nil {
		return "", 0, err
	}
	s := v
	if strings.Contains(s, "://") {
		u, perr := url.Parse(s)
		if perr != nil || u.Host == "" {
			return "", 0, c.valueError(key, v, "not a host:port address")
		}
		s = u.Host
	}
	host, portStr, serr := net.SplitHostPort(s)
	if serr != nil {
		if defaultPort < 0 || strings.Contains(strings.Trim(s, "[]"), ":") && !strings.HasPrefix(s, "[") {
			return "", 0, c.valueError(key, v, "not a host:port address")
		}
		host, portStr = strings.Trim(s, "[]"), strconv.Itoa(defaultPort)
	}
	port, perr := strconv.Atoi(portStr)
	if perr != nil || port < 0 || port > 65535 {
		return "", 0, c.valueError(key, v, "port is not a number from 0 to 65535")
	}
	if host == "" {
		return "", 0, c.valueError(key, v, "no host")
	}
	return host, port, nil
}

// Strings returns a comma-separated list, each item trimmed, empty items dropped.
func (c *Configuration) Strings(key string) ([]string, error) {
	v, err := c.Get(key)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}
