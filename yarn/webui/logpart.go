package webui

import (
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// What both daemons' container-log pages share: the user part of their URLs, and the
// part of a log file a page shows.

// userName is what a user name in a log URL may be: it names a directory of the remote
// log dir, so nothing that leaves it.
var userName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._@$-]{0,255}$`)

// ValidUser reports whether u may be the user of a log URL.
func ValidUser(u string) bool { return userName.MatchString(u) && !strings.Contains(u, "..") }

// LogStart is the page's start parameter: -N the last N bytes (4 KiB by default, as the
// Java NM's page), 0 the whole file.
func LogStart(r *http.Request) int64 {
	start := int64(-4096)
	if v := r.URL.Query().Get("start"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			start = n
		}
	}
	return start
}

// ShowPart puts the part of a log file from start into a page's data (Shown, Text, From,
// Len, Size): at most 4 MiB (the REST resources give whole files).
func ShowPart(data map[string]any, name string, r io.ReaderAt, size, start int64) {
	from := start
	if from < 0 {
		from = max(0, size+from)
	}
	from = min(from, size)
	n := min(size-from, 4<<20)
	buf := make([]byte, n)
	m, _ := io.ReadFull(io.NewSectionReader(r, from, n), buf)
	data["Shown"], data["Text"], data["From"], data["Len"], data["Size"] = name, string(buf[:m]), from > 0, m, size
}
