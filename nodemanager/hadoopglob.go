package nodemanager

// Hadoop's file name globs (org.apache.hadoop.fs.GlobPattern), as the Java NodeManager
// reads yarn.nodemanager.container.stderr.pattern: * and ?, [set] with [!negation],
// {a,b} groups (nested too), \ escaping the next character; an unmatched } is itself.

import (
	"fmt"
	"regexp"
	"strings"
)

// compileGlob translates a glob into the regular expression GlobPattern builds, matching
// whole names. A glob Hadoop refuses (an unclosed group or set, a trailing \) is refused
// with its reason; so is a /, since the pattern names files of one directory here.
func compileGlob(glob string) (*regexp.Regexp, error) {
	if strings.Contains(glob, "/") {
		return nil, fmt.Errorf("names files of the container's log dir itself: no / allowed")
	}
	var re strings.Builder
	re.WriteString("(?s)^")
	setOpen, curlyOpen := false, 0
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		switch {
		case c == '\\':
			i++
			if i >= len(glob) {
				return nil, fmt.Errorf("missing escaped character at %d", i)
			}
			re.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		case setOpen && c == ']':
			setOpen = false
			re.WriteByte(c)
		case setOpen && c == '!' && glob[i-1] == '[':
			re.WriteByte('^')
		case setOpen && c == '[':
			return nil, fmt.Errorf("unclosed character class at %d", i)
		case setOpen:
			re.WriteByte(c) // a set's members and ranges as they are
		case c == '[':
			setOpen = true
			re.WriteByte(c)
		case c == '*':
			re.WriteString(".*")
		case c == '?':
			re.WriteByte('.')
		case c == '{':
			re.WriteString("(?:")
			curlyOpen++
		case c == ',' && curlyOpen > 0:
			re.WriteByte('|')
		case c == '}' && curlyOpen > 0:
			re.WriteByte(')')
			curlyOpen--
		default:
			re.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		}
	}
	if setOpen {
		return nil, fmt.Errorf("unclosed character class")
	}
	if curlyOpen > 0 {
		return nil, fmt.Errorf("unclosed group")
	}
	re.WriteByte('$')
	compiled, err := regexp.Compile(re.String())
	if err != nil {
		return nil, fmt.Errorf("not a glob: %v", err)
	}
	return compiled, nil
}
