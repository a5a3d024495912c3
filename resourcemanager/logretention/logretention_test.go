package logretention

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/records"
)

// Sweep deletes an ended application's logs older than retain-seconds and keeps a running
// application's, a recent one's, and one with a file written after the cut-off.
func TestSweep(t *testing.T) {
	root := t.TempDir()
	c := conf.New()
	c.Set("yarn.log-aggregation-enable", "true")
	c.Set("yarn.log-aggregation.retain-seconds", "3600")
	c.Set("yarn.nodemanager.remote-app-log-dir", "file://"+root)
	s, on, err := ReadSettings(c)
	if err != nil || !on || s.Interval != 360*time.Second || s.Root != root {
		t.Fatalf("settings %+v %v %v", s, on, err)
	}
	now := time.Now()
	old := now.Add(-2 * time.Hour)
	mkIn := func(under, app string, fileTime, dirTime time.Time) string {
		dir := filepath.Join(root, "alice", under, app)
		os.MkdirAll(dir, 0o770)
		f := filepath.Join(dir, "127.0.0.1_8041")
		os.WriteFile(f, []byte("log"), 0o640)
		os.Chtimes(f, fileTime, fileTime)
		os.Chtimes(dir, dirTime, dirTime)
		return dir
	}
	mk := func(app string, fileTime, dirTime time.Time) string { return mkIn("logs", app, fileTime, dirTime) }
	expired := mk("application_1_0001", old, old)
	// Hadoop 3.3+'s layouts (bobbin.log-aggregation.layout=bucketed, or an Apache 3.3+ NM):
	// the buckets and the older logs-tfile, whichever layout is in force.
	expiredBucketed := mkIn("bucket-logs-tfile/0005", "application_1_0005", old, old)
	runningBucketed := mkIn("bucket-logs-tfile/0006", "application_1_0006", old, old)
	expiredOlder := mkIn("logs-tfile", "application_1_0007", old, old)
	running := mk("application_1_0002", old, old)
	recent := mk("application_1_0003", now, now)
	rewritten := mk("application_1_0004", now, old)
	d := &Deleter{Conf: c, Settings: s, Now: func() time.Time { return now }, Log: logrus.NewEntry(logrus.New()),
		Running: func(id records.ApplicationID) bool { return id.ID == 2 || id.ID == 6 }}
	deleted, err := d.Sweep()
	if want := []string{"file://" + expired, "file://" + expiredBucketed, "file://" + expiredOlder}; err != nil || !slices.Equal(deleted, want) {
		t.Fatalf("deleted %v, err %v; want %v", deleted, err, want)
	}
	for _, keep := range []string{running, recent, rewritten, runningBucketed} {
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("%s deleted", keep)
		}
	}
	// Off without aggregation or with a negative retain-seconds.
	c.Set("yarn.log-aggregation.retain-seconds", "-1")
	if _, on, _ := ReadSettings(c); on {
		t.Fatal("retain-seconds -1 deletes logs")
	}
}
