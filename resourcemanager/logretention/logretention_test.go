package logretention

import (
	"os"
	"path/filepath"
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
	mk := func(app string, fileTime, dirTime time.Time) string {
		dir := filepath.Join(root, "alice", "logs", app)
		os.MkdirAll(dir, 0o770)
		f := filepath.Join(dir, "127.0.0.1_8041")
		os.WriteFile(f, []byte("log"), 0o640)
		os.Chtimes(f, fileTime, fileTime)
		os.Chtimes(dir, dirTime, dirTime)
		return dir
	}
	expired := mk("application_1_0001", old, old)
	running := mk("application_1_0002", old, old)
	recent := mk("application_1_0003", now, now)
	rewritten := mk("application_1_0004", now, old)
	d := &Deleter{Conf: c, Settings: s, Now: func() time.Time { return now }, Log: logrus.NewEntry(logrus.New()),
		Running: func(id records.ApplicationID) bool { return id.ID == 2 }}
	deleted, err := d.Sweep()
	if err != nil || len(deleted) != 1 || deleted[0] != "file://"+expired {
		t.Fatalf("deleted %v, err %v", deleted, err)
	}
	for _, keep := range []string{running, recent, rewritten} {
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
