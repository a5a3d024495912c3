package logaggregation

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/nodemanager/containers"
	"github.com/bobbin-yarn/bobbin/yarn/aggregatedlog"
	"github.com/bobbin-yarn/bobbin/yarn/secureio"
)

// containerLog is one container's log dir and the files in it that are aggregated, with
// each file's version (container, name, size, modification time) in keys.
type containerLog struct {
	id    string
	files []aggregatedlog.LogFile
	keys  []string
}

// containerLogs lists the application's container log dirs on this node (every log
// dir), in container id order, with their files filtered by the application's include
// and exclude patterns (final) or its rolled ones (a rolling upload while it runs).
// Only regular files are listed, no link is followed, and with LinuxContainerExecutor a
// file must belong to the user the containers ran as: what is left out for those reasons
// is returned in skipped, to be logged and reported.
func (g *Aggregator) containerLogs(a *containers.App, final bool) (_ []containerLog, skipped []string, _ error) {
	include, exclude, err := logPatterns(a.LogContext, final)
	if err != nil {
		return nil, nil, err
	}
	type file struct {
		f   aggregatedlog.LogFile
		key string
	}
	byID := map[string][]file{}
	for _, l := range g.o.LogDirs {
		appDir, err := secureio.OpenDir(l, a.ID.String())
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				skipped = append(skipped, err.Error())
			}
			continue
		}
		owner := g.o.OwnerOf(a.User, appDir)
		ids, _ := appDir.Subdirs()
		for _, id := range ids {
			if !strings.HasPrefix(id, "container_") {
				continue
			}
			if _, ok := byID[id]; !ok {
				byID[id] = nil
			}
			dir, err := appDir.OpenDir(id)
			if err != nil {
				skipped = append(skipped, err.Error())
				continue
			}
			entries, _ := dir.List()
			for _, f := range entries {
				if (include != nil && !include.MatchString(f.Name)) || (exclude != nil && exclude.MatchString(f.Name)) {
					continue
				}
				if owner != secureio.AnyOwner && f.UID != owner {
					skipped = append(skipped, (&secureio.RefusedError{Path: filepath.Join(dir.Path(), f.Name),
						Reason: fmt.Sprintf("is owned by uid %d, not by uid %d, the user the container ran as", f.UID, owner)}).Error())
					continue
				}
				byID[id] = append(byID[id], file{aggregatedlog.LogFile{Name: f.Name, Length: f.Size, Open: openUnder(l, a.ID.String(), id, f.Name, owner)},
					fmt.Sprintf("%s/%s/%d/%d", id, f.Name, f.Size, f.ModTime.UnixNano())})
			}
			dir.Close()
		}
		appDir.Close()
	}
	out := make([]containerLog, 0, len(byID))
	for id, files := range byID {
		sort.Slice(files, func(i, j int) bool { return files[i].f.Name < files[j].f.Name })
		c := containerLog{id: id}
		for _, f := range files {
			c.files, c.keys = append(c.files, f.f), append(c.keys, f.key)
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out, skipped, nil
}

// openUnder opens a listed log file again when the writer copies it, through secureio:
// a file replaced since the listing by a link or something not regular, or by another
// user's, is refused then and the upload fails rather than copy it.
func openUnder(base, app, container, name string, owner int) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) { return secureio.OpenFile(owner, base, app, container, name) }
}

// logPatterns compiles the LogAggregationContext's patterns (Java regexes; full matches,
// as Pattern.matcher(name).matches()): the include and exclude patterns for the upload
// at the application's end (final), the rolled ones for a rolling upload, as the Java NM's
// LogValue filters: an application that set a context rolls only what its rolled patterns
// select (by default nothing). An include of ".*" and an empty exclude filter nothing.
func logPatterns(lc *yarnpb.LogAggregationContextProto, final bool) (include, exclude *regexp.Regexp, err error) {
	compile := func(p string) (*regexp.Regexp, error) {
		re, err := regexp.Compile("^(?:" + p + ")$")
		if err != nil {
			return nil, fmt.Errorf("log aggregation pattern %q: %w", p, err)
		}
		return re, nil
	}
	if lc == nil {
		// No context: every file, at the end and when rolling (the proto's defaults would
		// exclude every file from rolling: rolled_logs_exclude_pattern is ".*").
		return nil, nil, nil
	}
	inc, exc := lc.GetIncludePattern(), lc.GetExcludePattern()
	if !final {
		inc, exc = lc.GetRolledLogsIncludePattern(), lc.GetRolledLogsExcludePattern()
	}
	if p := inc; p != "" && p != ".*" {
		if include, err = compile(p); err != nil {
			return nil, nil, err
		}
	}
	if p := exc; p != "" {
		if exclude, err = compile(p); err != nil {
			return nil, nil, err
		}
	}
	return include, exclude, nil
}
