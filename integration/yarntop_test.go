package integration

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestYarnTopShowsTheCluster: the real 3.1.1 `yarn top` against Bobbin's RM and NM. Its
// client authenticator opens the RM's REST endpoint with OPTIONS first (a 404 there was
// "Error while authenticating with endpoint" on every refresh), and its summary comes from
// getQueueInfo's QueueStatistics (all zeros when they were missing): after two demo
// applications it shows them completed, and the cluster's memory available.
func TestYarnTopShowsTheCluster(t *testing.T) {
	home := requireHadoopVersion(t, hadoop3)
	c := startBobbinCluster(t)
	for range 2 {
		if out, err := c.demo(t, "--containers", "1", "--command", "true"); err != nil {
			t.Fatalf("demo: %v\n%s", err, out)
		}
	}
	// `yarn top` refreshes until it is stopped; its keyboard thread ends at once on a
	// closed stdin, the screen goes on.
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(home, "bin", "yarn"), "top", "-delay", "1")
	cmd.Env = hadoopEnv(home, c.confDir)
	var out bytes.Buffer
	var mu sync.Mutex
	cmd.Stdout = lockedWriter{mu: &mu, b: &out}
	cmd.Stderr = cmd.Stdout
	screen := func() string {
		mu.Lock()
		defer mu.Unlock()
		return out.String()
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	summary := regexp.MustCompile(`Applications: \d+ running, 2 submitted, 0 pending, 2 completed, 0 killed`)
	available := regexp.MustCompile(`Mem\(GB\): [1-9]\d* available`)
	for !summary.MatchString(screen()) || !available.MatchString(screen()) {
		if ctx.Err() != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if s := screen(); strings.Contains(s, "Error while authenticating") || !summary.MatchString(s) || !available.MatchString(s) {
		t.Fatalf("yarn top:\n%s", tail(s, 40))
	}
}
