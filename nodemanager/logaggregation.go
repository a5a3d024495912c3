package nodemanager

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/conf"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/yarn/aggregatedlog"
	"github.com/bobbin-yarn/bobbin/yarn/remotefs"
)

// LogAggregationSettings are yarn.log-aggregation-enable and where the logs go.
type LogAggregationSettings struct {
	Enabled bool
	// FS and Root are yarn.nodemanager.remote-app-log-dir resolved against fs.defaultFS.
	FS, Root string
	Suffix   string // yarn.nodemanager.remote-app-log-dir-suffix
	// RollInterval > 0 asks for rolling aggregation, which Bobbin does not do: logs are
	// aggregated when the application finishes (a warning says so at start).
	RollInterval time.Duration
}

func readLogAggregationSettings(c *conf.Configuration) (LogAggregationSettings, error) {
	var s LogAggregationSettings
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	var err error
	s.Enabled, err = c.Bool("yarn.log-aggregation-enable")
	add(err)
	dir, err := c.Trimmed("yarn.nodemanager.remote-app-log-dir")
	add(err)
	if err == nil {
		s.FS, s.Root, err = remotefs.Resolve(c, dir)
		if err != nil && s.Enabled {
			add(&conf.ValueError{Source: c.Source("yarn.nodemanager.remote-app-log-dir"), Key: "yarn.nodemanager.remote-app-log-dir", Value: dir, Reason: err.Error()})
		}
	}
	s.Suffix, err = c.Trimmed("yarn.nodemanager.remote-app-log-dir-suffix")
	add(err)
	if s.Suffix == "" || strings.Contains(s.Suffix, "/") {
		add(&conf.ValueError{Source: c.Source("yarn.nodemanager.remote-app-log-dir-suffix"), Key: "yarn.nodemanager.remote-app-log-dir-suffix", Value: s.Suffix, Reason: "must be one path component"})
	}
	s.RollInterval, err = c.Duration("yarn.nodemanager.log-aggregation.roll-monitoring-interval-seconds", time.Second)
	add(err)
	return s, errors.Join(errs...)
}

// logAggregationResult is an application's aggregation outcome, for the RM.
type logAggregationResult struct {
	status yarnpb.LogAggregationStatusProto
	diag   string
}

// aggregateLogs writes the application's container logs on this node to
// <root>/<user>/<suffix>/<app>/<node> as the Java NM's AppLogAggregator does: first as
// <node>.tmp, renamed when whole, acting as the application's user. It reports what
// happened; the local logs are deleted only after a success.
func (nm *NodeManager) aggregateLogs(a *nmApp) logAggregationResult {
	s := nm.settings.LogAggregation
	log := nm.log.WithField("application", a.id.String())
	fail := func(err error) logAggregationResult {
		log.WithError(err).Warn("log aggregation failed; local logs kept")
		return logAggregationResult{yarnpb.LogAggregationStatusProto_LOG_FAILED, err.Error()}
	}
	containers, err := nm.containerLogs(a)
	if err != nil {
		return fail(err)
	}
	fs, err := remotefs.Open(nm.opts.Conf, s.FS, a.user)
	if err != nil {
		return fail(err)
	}
	defer fs.Close()
	// The root is everyone's (sticky, 1777), each user's dirs 0770, the file 0640.
	if _, err := fs.Stat(s.Root); errors.Is(err, os.ErrNotExist) {
		if err := fs.MkdirAll(s.Root, 0o777); err != nil {
			return fail(fmt.Errorf("create %s: %w", fs.URI(s.Root), err))
		}
		fs.Chmod(s.Root, os.ModeSticky|0o777)
	} else if err != nil {
		return fail(fmt.Errorf("%s: %w", fs.URI(s.Root), err))
	}
	dir := aggregatedlog.AppDir(s.Root, a.user, s.Suffix, a.id.String())
	for _, d := range []string{path.Join(s.Root, a.user), path.Join(s.Root, a.user, s.Suffix), dir} {
		if _, err := fs.Stat(d); err == nil {
			continue
		}
		if err := fs.MkdirAll(d, 0o770); err != nil {
			return fail(fmt.Errorf("create %s: %w", fs.URI(d), err))
		}
		fs.Chmod(d, 0o770)
	}
	final := path.Join(dir, aggregatedlog.NodeFileName(nm.NodeID()))
	tmp := final + aggregatedlog.TmpSuffix
	w, err := fs.Create(tmp)
	if err != nil {
		return fail(fmt.Errorf("create %s: %w", fs.URI(tmp), err))
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	err = writeAggregatedLog(bw, a, containers)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		fs.Chmod(tmp, 0o640)
		err = fs.Rename(tmp, final)
	}
	if err != nil {
		fs.RemoveAll(tmp)
		return fail(fmt.Errorf("write %s: %w", fs.URI(final), err))
	}
	log.WithFields(map[string]any{"containers": len(containers), "file": fs.URI(final)}).Info("container logs aggregated")
	return logAggregationResult{status: yarnpb.LogAggregationStatusProto_LOG_SUCCEEDED}
}

// containerLog is one container's log dir and the files in it that are aggregated.
type containerLog struct {
	id    string
	files []aggregatedlog.LogFile
}

// containerLogs lists the application's container log dirs on this node (every log
// dir), in container id order, with their files filtered by the application's
// include and exclude patterns.
func (nm *NodeManager) containerLogs(a *nmApp) ([]containerLog, error) {
	include, exclude, err := logPatterns(a.logContext)
	if err != nil {
		return nil, err
	}
	byID := map[string]*containerLog{}
	for _, l := range nm.settings.LogDirs {
		entries, err := os.ReadDir(filepath.Join(l, a.id.String()))
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.IsDir() || !strings.HasPrefix(e.Name(), "container_") {
				continue
			}
			c := byID[e.Name()]
			if c == nil {
				c = &containerLog{id: e.Name()}
				byID[e.Name()] = c
			}
			dir := filepath.Join(l, a.id.String(), e.Name())
			files, _ := os.ReadDir(dir)
			for _, f := range files {
				info, err := f.Info()
				if err != nil || !info.Mode().IsRegular() {
					continue
				}
				if (include != nil && !include.MatchString(f.Name())) || (exclude != nil && exclude.MatchString(f.Name())) {
					continue
				}
				p := filepath.Join(dir, f.Name())
				c.files = append(c.files, aggregatedlog.LogFile{Name: f.Name(), Length: info.Size(),
					Open: func() (io.ReadCloser, error) { return os.Open(p) }})
			}
		}
	}
	out := make([]containerLog, 0, len(byID))
	for _, c := range byID {
		sort.Slice(c.files, func(i, j int) bool { return c.files[i].Name < c.files[j].Name })
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out, nil
}

// logPatterns compiles the LogAggregationContext's patterns (Java regexes; full matches,
// as Pattern.matcher(name).matches()). An include of ".*" (the default) and an empty
// exclude filter nothing.
func logPatterns(lc *yarnpb.LogAggregationContextProto) (include, exclude *regexp.Regexp, err error) {
	compile := func(p string) (*regexp.Regexp, error) {
		re, err := regexp.Compile("^(?:" + p + ")$")
		if err != nil {
			return nil, fmt.Errorf("log aggregation pattern %q: %w", p, err)
		}
		return re, nil
	}
	if p := lc.GetIncludePattern(); p != "" && p != ".*" {
		if include, err = compile(p); err != nil {
			return nil, nil, err
		}
	}
	if p := lc.GetExcludePattern(); p != "" {
		if exclude, err = compile(p); err != nil {
			return nil, nil, err
		}
	}
	return include, exclude, nil
}

// writeAggregatedLog writes the file: the application's ACLs and owner, then each
// container's logs.
func writeAggregatedLog(w io.Writer, a *nmApp, containers []containerLog) error {
	var acls []aggregatedlog.ACL
	for _, acl := range a.acls {
		acls = append(acls, aggregatedlog.ACL{Type: strings.TrimPrefix(acl.GetAccessType().String(), "APPACCESS_"), ACL: acl.GetAcl()})
	}
	lw, err := aggregatedlog.NewWriter(w, a.user, acls)
	if err != nil {
		return err
	}
	for _, c := range containers {
		if err := lw.Append(c.id, c.files); err != nil {
			return err
		}
	}
	return lw.Close()
}

// noteLogAggregation queues an application's outcome for the next heartbeat.
func (nm *NodeManager) noteLogAggregation(a *nmApp, r logAggregationResult) {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	nm.logAggReports = append(nm.logAggReports, &yarnpb.LogAggregationReportProto{ApplicationId: a.id.Proto(),
		LogAggregationStatus: r.status.Enum(), Diagnostics: proto.String(r.diag)})
}

// takeLogAggregationReports hands the queued outcomes to a heartbeat; put them back with
// requeueLogAggregationReports if it fails.
func (nm *NodeManager) takeLogAggregationReports() []*yarnpb.LogAggregationReportProto {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	r := nm.logAggReports
	nm.logAggReports = nil
	return r
}

func (nm *NodeManager) requeueLogAggregationReports(r []*yarnpb.LogAggregationReportProto) {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	nm.logAggReports = append(r, nm.logAggReports...)
}
