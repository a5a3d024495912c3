package nodemanager

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/conf"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/nodemanager/containers"
	"github.com/bobbin-yarn/bobbin/yarn/aggregatedlog"
	"github.com/bobbin-yarn/bobbin/yarn/remotefs"
	"github.com/bobbin-yarn/bobbin/yarn/secureio"
)

// LogAggregationSettings are yarn.log-aggregation-enable and where the logs go.
type LogAggregationSettings struct {
	Enabled bool
	// FS and Root are yarn.nodemanager.remote-app-log-dir resolved against fs.defaultFS.
	FS, Root string
	Suffix   string // yarn.nodemanager.remote-app-log-dir-suffix
	// RollInterval > 0 is rolling aggregation: running applications' logs are uploaded
	// every interval (at least an hour unless yarn.nodemanager.log-aggregation.debug-enabled,
	// as in the Java NM), each upload a file <node>_<time> of the files not uploaded yet.
	RollInterval time.Duration
	// NumLogFiles bounds the rolled files kept per application and node
	// (yarn.nodemanager.log-aggregation.num-log-files-per-app): the oldest go.
	NumLogFiles int
}

// minRollInterval is the Java NM's floor for the rolling interval outside debug mode.
const minRollInterval = time.Hour

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
	debug, err := c.Bool("yarn.nodemanager.log-aggregation.debug-enabled")
	add(err)
	if s.RollInterval > 0 && s.RollInterval < minRollInterval && !debug {
		s.RollInterval = minRollInterval
	}
	s.NumLogFiles, err = c.Int("yarn.nodemanager.log-aggregation.num-log-files-per-app")
	add(err)
	if s.NumLogFiles < 1 {
		s.NumLogFiles = 1
	}
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
func (nm *NodeManager) aggregateLogs(a *containers.App) logAggregationResult {
	return nm.uploadLogs(a, true)
}

// rollLogs uploads the logs of every running application with containers here
// (rolling aggregation), and reports each upload's outcome to the RM.
func (nm *NodeManager) rollLogs() {
	for _, a := range nm.table.Unfinished() {
		if r := nm.uploadLogs(a, false); r.status != 0 {
			if r.status == yarnpb.LogAggregationStatusProto_LOG_SUCCEEDED {
				r.status = yarnpb.LogAggregationStatusProto_LOG_RUNNING // the application goes on
			} else {
				r.status = yarnpb.LogAggregationStatusProto_LOG_RUNNING_WITH_FAILURE
			}
			nm.noteLogAggregation(a, r)
		}
	}
}

// uploadLogs writes one aggregated file of the application's logs on this node: all of
// them when it ended (final), else those the rolled patterns select. With rolling, files
// uploaded before (same size and time) are left out and the file is <node>_<time>. A
// rolling upload with nothing new reports status 0 and writes nothing.
func (nm *NodeManager) uploadLogs(a *containers.App, final bool) logAggregationResult {
	s := nm.settings.LogAggregation
	rolling := s.RollInterval > 0
	log := nm.log.WithField("application", a.ID.String())
	fail := func(err error) logAggregationResult {
		log.WithError(err).Warn("log aggregation failed; local logs kept")
		return logAggregationResult{yarnpb.LogAggregationStatusProto_LOG_FAILED, err.Error()}
	}
	containers, skipped, err := nm.containerLogs(a, final)
	if err != nil {
		return fail(err)
	}
	for _, why := range skipped {
		log.WithField("reason", why).Warn("container log file not aggregated")
	}
	if rolling {
		uploaded, rolled := nm.table.Uploaded(a)
		containers = notUploaded(containers, uploaded)
		if len(containers) == 0 && (!final || rolled > 0) {
			return logAggregationResult{status: nothingUploaded(final)}
		}
	}
	fs, err := remotefs.Open(nm.opts.Conf, s.FS, a.User)
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
	dir := aggregatedlog.AppDir(s.Root, a.User, s.Suffix, a.ID.String())
	name := aggregatedlog.NodeFileName(nm.NodeID())
	if rolling {
		name += fmt.Sprintf("_%d", nm.opts.Now().UnixMilli())
	}
	target := path.Join(dir, name)
	uid, gid, asUserToo := nm.aggregationIdentity(fs, a)
	owner := -1
	if asUserToo {
		owner = uid
	}
	write := func() error {
		err := writeUpload(fs, a, containers, []string{path.Join(s.Root, a.User), path.Join(s.Root, a.User, s.Suffix), dir}, target, owner)
		if err == nil && rolling {
			nm.pruneRolled(fs, dir, log)
		}
		return err
	}
	if asUserToo {
		err = asUser(uid, gid, write)
	} else {
		err = write()
	}
	if err != nil {
		return fail(err)
	}
	if rolling {
		var keys []string
		for _, c := range containers {
			keys = append(keys, c.keys...)
		}
		nm.table.NoteUploaded(a, keys)
	}
	log.WithFields(map[string]any{"containers": len(containers), "file": fs.URI(target), "final": final, "skipped": len(skipped)}).Info("container logs aggregated")
	return logAggregationResult{status: yarnpb.LogAggregationStatusProto_LOG_SUCCEEDED, diag: skippedDiagnostics(skipped)}
}

// skippedDiagnostics tells the RM (the application's log aggregation diagnostics) which
// files were not aggregated and why.
func skippedDiagnostics(skipped []string) string {
	if len(skipped) == 0 {
		return ""
	}
	return "Not aggregated: " + strings.Join(skipped, "; ")
}

// aggregationIdentity is who aggregation acts as on a local file system (file://): the
// user the application's containers ran as, with the NodeManager's group, as the Java
// NodeManager writes as the application's user. The user's dirs and files are then the
// user's (it reads its own logs under 0770 dirs and 0640 files), and as the kernel checks
// every path as that user, a link the user left in its own dirs cannot make the root
// NodeManager write elsewhere. On HDFS the client acts as the user already; with
// containers run as the NodeManager there is nobody else to act as.
func (nm *NodeManager) aggregationIdentity(fs remotefs.FS, a *containers.App) (uid, gid int, ok bool) {
	if !remotefs.IsLocal(fs) || !nm.runAs.enabled {
		return 0, 0, false
	}
	u, err := nm.runAs.userFor(a.User)
	if err != nil || u == nil {
		return 0, 0, false
	}
	return int(u.UID), nm.runAs.nmGID, true
}

// writeUpload creates the user's dirs that do not exist yet (0770), writes the file as
// <target>.tmp (0640) and renames it into place when whole. owner >= 0: the user's dir
// (the first) must be owned by that uid: the root is everyone's (1777), and a dir another
// user made there first must not receive this user's logs.
func writeUpload(fs remotefs.FS, a *containers.App, containers []containerLog, dirs []string, target string, owner int) error {
	for i, d := range dirs {
		if fi, err := fs.Stat(d); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && i == 0 && owner >= 0 && int(st.Uid) != owner {
				return fmt.Errorf("%s is owned by uid %d, not by uid %d whose logs it would hold", fs.URI(d), st.Uid, owner)
			}
			continue
		}
		if err := fs.MkdirAll(d, 0o770); err != nil {
			return fmt.Errorf("create %s: %w", fs.URI(d), err)
		}
		fs.Chmod(d, 0o770)
	}
	tmp := target + aggregatedlog.TmpSuffix
	w, err := fs.Create(tmp)
	if err != nil {
		return fmt.Errorf("create %s: %w", fs.URI(tmp), err)
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
		err = fs.Rename(tmp, target)
	}
	if err != nil {
		fs.RemoveAll(tmp)
		return fmt.Errorf("write %s: %w", fs.URI(target), err)
	}
	return nil
}

// nothingUploaded is a rolling upload's outcome when there was nothing new: nothing to
// report while the application runs, a success at its end (earlier uploads hold it all).
func nothingUploaded(final bool) yarnpb.LogAggregationStatusProto {
	if final {
		return yarnpb.LogAggregationStatusProto_LOG_SUCCEEDED
	}
	return 0
}

// notUploaded keeps the files whose version is not in uploaded, and the containers left
// with files.
func notUploaded(containers []containerLog, uploaded map[string]bool) []containerLog {
	var out []containerLog
	for _, c := range containers {
		left := containerLog{id: c.id}
		for i, k := range c.keys {
			if !uploaded[k] {
				left.files, left.keys = append(left.files, c.files[i]), append(left.keys, k)
			}
		}
		if len(left.files) > 0 {
			out = append(out, left)
		}
	}
	return out
}

// pruneRolled deletes this node's oldest rolled files of the application beyond
// yarn.nodemanager.log-aggregation.num-log-files-per-app.
func (nm *NodeManager) pruneRolled(fs remotefs.FS, dir string, log *logrus.Entry) {
	infos, err := fs.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := aggregatedlog.NodeFileName(nm.NodeID()) + "_"
	var mine []string
	for _, fi := range infos {
		if strings.HasPrefix(fi.Name(), prefix) && !strings.HasSuffix(fi.Name(), aggregatedlog.TmpSuffix) {
			mine = append(mine, fi.Name())
		}
	}
	sort.Slice(mine, func(i, j int) bool { return rolledTime(mine[i]) < rolledTime(mine[j]) })
	for len(mine) > nm.settings.LogAggregation.NumLogFiles {
		if err := fs.RemoveAll(path.Join(dir, mine[0])); err != nil {
			log.WithError(err).Warn("old rolled log file not deleted")
		}
		mine = mine[1:]
	}
}

// rolledTime is the upload time a rolled file's name ends with.
func rolledTime(name string) int64 {
	var t int64
	if i := strings.LastIndexByte(name, '_'); i >= 0 {
		fmt.Sscan(name[i+1:], &t)
	}
	return t
}

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
func (nm *NodeManager) containerLogs(a *containers.App, final bool) (_ []containerLog, skipped []string, _ error) {
	include, exclude, err := logPatterns(a.LogContext, final)
	if err != nil {
		return nil, nil, err
	}
	type file struct {
		f   aggregatedlog.LogFile
		key string
	}
	byID := map[string][]file{}
	for _, l := range nm.settings.LogDirs {
		appDir, err := secureio.OpenDir(l, a.ID.String())
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				skipped = append(skipped, err.Error())
			}
			continue
		}
		owner := nm.appFileOwner(a.User, appDir)
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

// writeAggregatedLog writes the file: the application's ACLs and owner, then each
// container's logs.
func writeAggregatedLog(w io.Writer, a *containers.App, containers []containerLog) error {
	var acls []aggregatedlog.ACL
	for _, acl := range a.ACLs {
		acls = append(acls, aggregatedlog.ACL{Type: strings.TrimPrefix(acl.GetAccessType().String(), "APPACCESS_"), ACL: acl.GetAcl()})
	}
	lw, err := aggregatedlog.NewWriter(w, a.User, acls)
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
func (nm *NodeManager) noteLogAggregation(a *containers.App, r logAggregationResult) {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	nm.logAggReports = append(nm.logAggReports, &yarnpb.LogAggregationReportProto{ApplicationId: a.ID.Proto(),
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
