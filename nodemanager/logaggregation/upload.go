// Package logaggregation uploads a NodeManager's container logs to the remote log dir
// (yarn.nodemanager.remote-app-log-dir) in the Java NM's aggregated format (package
// yarn/aggregatedlog): at an application's end, and while it runs with rolling
// aggregation. It reads the logs through yarn/secureio and writes as the application's
// user, and keeps each outcome for the RM until a heartbeat takes it.
package logaggregation

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
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

// Options are what an Aggregator works with.
type Options struct {
	Settings Settings
	Conf     *conf.Configuration // for the remote file system's client
	LogDirs  []string            // yarn.nodemanager.log-dirs
	Table    *containers.Table   // the applications, and what rolling uploaded of each
	NodeID   func() string       // "host:port", which names the node's files
	Now      func() time.Time
	Log      *logrus.Entry
	// OwnerOf is the uid an application's log files must belong to (secureio.AnyOwner:
	// any); appDir is <log dir>/<app> when the caller has it open.
	OwnerOf func(appUser string, appDir *secureio.Dir) int
	// ActAs is who writes an application's logs to a local file system: the user its
	// containers ran as, with the NodeManager's group (ok false: the NodeManager itself).
	ActAs func(appUser string) (uid, gid int, ok bool)
}

// Aggregator uploads applications' container logs to the remote log dir, as the Java
// NM's AppLogAggregator, and keeps their outcomes for the RM until a heartbeat takes them.
type Aggregator struct {
	o Options

	mu sync.Mutex
	// reports are applications' outcomes for the next heartbeat.
	reports []*yarnpb.LogAggregationReportProto
}

// New is an Aggregator; it does nothing until asked.
func New(o Options) *Aggregator { return &Aggregator{o: o} }

// Result is an application's aggregation outcome, for the RM.
type Result struct {
	Status yarnpb.LogAggregationStatusProto
	Diag   string
}

// Final writes the application's container logs on this node to
// <root>/<user>/<suffix>/<app>/<node> as the Java NM's AppLogAggregator does at the
// application's end: first as <node>.tmp, renamed when whole, acting as the application's
// user. The outcome is queued for the RM and returned; the caller deletes the local logs
// only after a success.
func (g *Aggregator) Final(a *containers.App) Result {
	r := g.upload(a, true)
	g.note(a, r)
	return r
}

// Roll uploads the logs of every running application with containers here (rolling
// aggregation), and queues each upload's outcome for the RM.
func (g *Aggregator) Roll() {
	for _, a := range g.o.Table.Unfinished() {
		if r := g.upload(a, false); r.Status != 0 {
			if r.Status == yarnpb.LogAggregationStatusProto_LOG_SUCCEEDED {
				r.Status = yarnpb.LogAggregationStatusProto_LOG_RUNNING // the application goes on
			} else {
				r.Status = yarnpb.LogAggregationStatusProto_LOG_RUNNING_WITH_FAILURE
			}
			g.note(a, r)
		}
	}
}

// upload writes one aggregated file of the application's logs on this node: all of
// them when it ended (final), else those the rolled patterns select. With rolling, files
// uploaded before (same size and time) are left out and the file is <node>_<time>. A
// rolling upload with nothing new reports status 0 and writes nothing.
func (g *Aggregator) upload(a *containers.App, final bool) Result {
	s := g.o.Settings
	rolling := s.RollInterval > 0
	log := g.o.Log.WithField("application", a.ID.String())
	fail := func(err error) Result {
		log.WithError(err).Warn("log aggregation failed; local logs kept")
		return Result{yarnpb.LogAggregationStatusProto_LOG_FAILED, err.Error()}
	}
	containers, skipped, err := g.containerLogs(a, final)
	if err != nil {
		return fail(err)
	}
	for _, why := range skipped {
		log.WithField("reason", why).Warn("container log file not aggregated")
	}
	if rolling {
		uploaded, rolled := g.o.Table.Uploaded(a)
		containers = notUploaded(containers, uploaded)
		if len(containers) == 0 && (!final || rolled > 0) {
			return Result{Status: nothingUploaded(final)}
		}
	}
	fs, err := remotefs.Open(g.o.Conf, s.FS, a.User)
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
	dirs := s.Location.AppDirs(s.Root, a.User, a.ID)
	dir := dirs[len(dirs)-1]
	name := aggregatedlog.NodeFileName(g.o.NodeID())
	if rolling {
		name += fmt.Sprintf("_%d", g.o.Now().UnixMilli())
	}
	target := path.Join(dir, name)
	uid, gid, asUserToo := g.identity(fs, a)
	owner := -1
	if asUserToo {
		owner = uid
	}
	write := func() error {
		err := writeUpload(fs, a, containers, dirs, target, owner)
		if err == nil && rolling {
			g.pruneRolled(fs, dir, log)
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
		g.o.Table.NoteUploaded(a, keys)
	}
	log.WithFields(map[string]any{"containers": len(containers), "file": fs.URI(target), "final": final, "skipped": len(skipped)}).Info("container logs aggregated")
	return Result{Status: yarnpb.LogAggregationStatusProto_LOG_SUCCEEDED, Diag: skippedDiagnostics(skipped)}
}

// skippedDiagnostics tells the RM (the application's log aggregation diagnostics) which
// files were not aggregated and why.
func skippedDiagnostics(skipped []string) string {
	if len(skipped) == 0 {
		return ""
	}
	return "Not aggregated: " + strings.Join(skipped, "; ")
}

// identity is who aggregation acts as on a local file system (file://): the
// user the application's containers ran as, with the NodeManager's group, as the Java
// NodeManager writes as the application's user. The user's dirs and files are then the
// user's (it reads its own logs under 0770 dirs and 0640 files), and as the kernel checks
// every path as that user, a link the user left in its own dirs cannot make the root
// NodeManager write elsewhere. On HDFS the client acts as the user already; with
// containers run as the NodeManager there is nobody else to act as.
func (g *Aggregator) identity(fs remotefs.FS, a *containers.App) (uid, gid int, ok bool) {
	if !remotefs.IsLocal(fs) || g.o.ActAs == nil {
		return 0, 0, false
	}
	return g.o.ActAs(a.User)
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
func (g *Aggregator) pruneRolled(fs remotefs.FS, dir string, log *logrus.Entry) {
	infos, err := fs.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := aggregatedlog.NodeFileName(g.o.NodeID()) + "_"
	var mine []string
	for _, fi := range infos {
		if strings.HasPrefix(fi.Name(), prefix) && !strings.HasSuffix(fi.Name(), aggregatedlog.TmpSuffix) {
			mine = append(mine, fi.Name())
		}
	}
	sort.Slice(mine, func(i, j int) bool { return rolledTime(mine[i]) < rolledTime(mine[j]) })
	for len(mine) > g.o.Settings.NumLogFiles {
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

// note queues an application's outcome for the next heartbeat.
func (g *Aggregator) note(a *containers.App, r Result) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.reports = append(g.reports, &yarnpb.LogAggregationReportProto{ApplicationId: a.ID.Proto(),
		LogAggregationStatus: r.Status.Enum(), Diagnostics: proto.String(r.Diag)})
}

// Take hands the queued outcomes to a heartbeat; Requeue puts them back if it fails.
func (g *Aggregator) Take() []*yarnpb.LogAggregationReportProto {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.reports
	g.reports = nil
	return r
}

// Requeue puts back the outcomes of a heartbeat that failed, before those queued since.
func (g *Aggregator) Requeue(r []*yarnpb.LogAggregationReportProto) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.reports = append(r, g.reports...)
}
