package borrowed

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Window is a daily time window [Start, End) in minutes after midnight; one whose end is
// before its start wraps past midnight (22:00-06:00).
type Window struct {
	Start, End int
}

func (w Window) String() string {
	return fmt.Sprintf("%02d:%02d-%02d:%02d", w.Start/60, w.Start%60, w.End/60, w.End%60)
}

// Contains reports whether the minute of the day m falls in the window.
func (w Window) Contains(m int) bool {
	if w.Start <= w.End {
		return m >= w.Start && m < w.End
	}
	return m >= w.Start || m < w.End
}

// ParseWindows reads "09:00-18:00,22:30-23:59" (empty: none).
func ParseWindows(s string) ([]Window, error) {
	var out []Window
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		a, b, ok := strings.Cut(part, "-")
		if !ok {
			return nil, fmt.Errorf("critical hours %q: want HH:MM-HH:MM", part)
		}
		start, err := minuteOfDay(a)
		if err != nil {
			return nil, fmt.Errorf("critical hours %q: %w", part, err)
		}
		end, err := minuteOfDay(b)
		if err != nil {
			return nil, fmt.Errorf("critical hours %q: %w", part, err)
		}
		if start == end {
			return nil, fmt.Errorf("critical hours %q: empty window", part)
		}
		out = append(out, Window{start, end})
	}
	return out, nil
}

func minuteOfDay(s string) (int, error) {
	h, m, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return 0, fmt.Errorf("%q is not HH:MM", s)
	}
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if err1 != nil || err2 != nil || hh < 0 || mm < 0 || mm > 59 || hh > 24 || (hh == 24 && mm != 0) {
		return 0, fmt.Errorf("%q is not HH:MM", s)
	}
	return hh*60 + mm, nil
}

// Critical returns the window that now falls in, in location loc.
func Critical(ws []Window, now time.Time, loc *time.Location) (Window, bool) {
	t := now.In(loc)
	m := t.Hour()*60 + t.Minute()
	for _, w := range ws {
		if w.Contains(m) {
			return w, true
		}
	}
	return Window{}, false
}
