package webui

import (
	"bytes"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/bobbin-yarn/bobbin/yarn/aggregatedlog"
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

// LogFile is one file on a container-log page.
type LogFile struct {
	Name  string
	Size  int64
	ModMs int64 // last modified, ms since the epoch (0: not known)
}

// AggregatedLogPage puts a container's aggregated log files into a page's data (Files,
// by name) and, when file is named, that file's part (ShowPart). It reports false when
// the container has no log file of that name.
func AggregatedLogPage(data map[string]any, logs []aggregatedlog.Log, file string, r *http.Request) bool {
	var files []LogFile
	var shown *aggregatedlog.Log
	for i, l := range logs {
		files = append(files, LogFile{Name: l.Type, Size: int64(len(l.Data))})
		if l.Type == file {
			shown = &logs[i]
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	data["Files"] = files
	if file == "" {
		return true
	}
	if shown == nil {
		return false
	}
	ShowPart(data, file, bytes.NewReader(shown.Data), int64(len(shown.Data)), LogStart(r))
	return true
}
