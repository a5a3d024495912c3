package nodemanager

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// diskHealth is the state of the local and log dirs, as Java's LocalDirsHandlerService
// keeps it: a dir is good while it is writable, under the utilization limit and above the
// free-space minimum. New containers use only good dirs; a node without a good local or
// log dir reports itself unhealthy.
type diskHealth struct {
	goodLocal, goodLog []string
	report             string // "" when every dir is good
}

// checkDir says why dir is bad, or "".
func checkDir(dir string, maxPercent float64, minFreeMB int64) string {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err.Error()
	}
	f, err := os.CreateTemp(dir, ".bobbin-health-*")
	if err != nil {
		return "not writable: " + err.Error()
	}
	f.Close()
	os.Remove(f.Name())
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return err.Error()
	}
	total := float64(st.Blocks) * float64(st.Bsize)
	free := float64(st.Bavail) * float64(st.Bsize)
	if total > 0 {
		if used := 100 * (total - free) / total; used > maxPercent {
			return fmt.Sprintf("used space above threshold of %.1f%%", maxPercent)
		}
	}
	if free < float64(minFreeMB)*(1<<20) {
		return fmt.Sprintf("free space below limit of %dMB", minFreeMB)
	}
	return ""
}

// checkDisks evaluates every dir once.
func (nm *NodeManager) checkDisks() diskHealth {
	s := nm.settings
	var h diskHealth
	var problems []string
	check := func(kind string, dirs []string) []string {
		var good, bad []string
		for _, d := range dirs {
			if why := checkDir(d, s.DiskMaxPercent, s.DiskMinFreeMB); why != "" {
				bad = append(bad, fmt.Sprintf("%s error, %s", filepath.Clean(d), why))
				continue
			}
			good = append(good, d)
		}
		if len(bad) > 0 {
			problems = append(problems, fmt.Sprintf("%d/%d %s are bad: %s", len(bad), len(dirs), kind, strings.Join(bad, "; ")))
		}
		return good
	}
	h.goodLocal = check("local-dirs", s.LocalDirs)
	h.goodLog = check("log-dirs", s.LogDirs)
	h.report = strings.Join(problems, "; ")
	return h
}

// healthy reports whether the node can run containers.
func (h diskHealth) healthy() bool { return len(h.goodLocal) > 0 && len(h.goodLog) > 0 }

// recheckDisks re-evaluates the dirs (every disk-health-checker interval) and logs changes.
func (nm *NodeManager) recheckDisks() {
	h := nm.checkDisks()
	nm.mu.Lock()
	changed := h.report != nm.disks.report
	nm.disks = h
	nm.mu.Unlock()
	if !changed {
		return
	}
	if h.report == "" {
		nm.log.Info("all local and log dirs are good again")
	} else {
		nm.log.WithField("healthy", h.healthy()).Warn(h.report)
	}
}

// goodDirs are the local and log dirs that passed the last check.
func (nm *NodeManager) goodDirs() (local, logs []string) {
	nm.mu.Lock()
	defer nm.mu.Unlock()
	return nm.disks.goodLocal, nm.disks.goodLog
}
