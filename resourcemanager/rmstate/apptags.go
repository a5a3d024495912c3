// The application tags Bobbin reads: bobbin.runtime (backfilling) and bobbin.gang.

package rmstate

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// RuntimeTag is the application tag that declares a runtime estimate for backfilling
// (docs/scheduling.md §5): bobbin.runtime=<duration>, e.g. -Dmapreduce.job.tags=bobbin.runtime=20m.
const RuntimeTag = "bobbin.runtime="

// GangTag is the application tag that makes every container ask of the application a
// gang (docs/scheduling.md): the containers of one ask are placed together or not at
// all. "bobbin.gang" or "bobbin.gang=true"; "bobbin.gang=false" is the default.
const GangTag = "bobbin.gang"

// GangRequested reads the bobbin.gang tag; a value other than true or false is refused.
func GangRequested(tags []string) (bool, error) {
	for _, t := range tags {
		v := strings.ToLower(strings.TrimSpace(t))
		if v == GangTag {
			return true, nil
		}
		rest, ok := strings.CutPrefix(v, GangTag+"=")
		if !ok {
			continue
		}
		b, err := strconv.ParseBool(rest)
		if err != nil {
			return false, fmt.Errorf("application tag %q: %s takes true or false", t, GangTag)
		}
		return b, nil
	}
	return false, nil
}

// DeclaredRuntime is an application's runtime estimate for backfilling: its
// bobbin.runtime tag, else its lifetime (lifetimeMs, when positive), else 0 (unknown: never
// started ahead of anyone). A tag that is not a positive duration is refused.
func DeclaredRuntime(tags []string, lifetimeMs int64) (time.Duration, error) {
	for _, t := range tags {
		v, ok := strings.CutPrefix(strings.ToLower(strings.TrimSpace(t)), RuntimeTag)
		if !ok {
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			if secs, err2 := strconv.ParseInt(v, 10, 64); err2 == nil {
				d, err = time.Duration(secs)*time.Second, nil
			}
		}
		if err != nil || d <= 0 {
			return 0, fmt.Errorf("application tag %q: %s needs a positive duration such as 20m or 90s", t, RuntimeTag)
		}
		return d, nil
	}
	if lifetimeMs > 0 {
		return time.Duration(lifetimeMs) * time.Millisecond, nil
	}
	return 0, nil
}
