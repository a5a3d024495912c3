package integration

import (
	"strings"
	"testing"
	"time"
)

// TestApacheNodeManagerRegisters starts `bobbin resourcemanager` and an unchanged Apache
// 2.7.3 NodeManager in a private network namespace and checks with the real yarn CLI
// that the node is RUNNING.
func TestApacheNodeManagerRegisters(t *testing.T) {
	t.Parallel() // its own network namespace: see parallelism in cluster_test.go
	c := newNSCluster(t)
	out, err := c.run(t, 3*time.Minute, "sleep 2\n$HADOOP_HOME/bin/yarn node -list -all 2>&1")
	if err != nil || !strings.Contains(out, "Total Nodes:1") || !strings.Contains(out, "RUNNING") || !strings.Contains(out, "rm exit 0") {
		t.Fatalf("err %v\noutput:\n%s\nRM log:\n%s\nNM log (tail):\n%s", err, out, c.logTail("rm.log", 60), c.logTail("nm.log", 40))
	}
	if !strings.Contains(c.logTail("rm.log", 1000), "NodeManager registered") {
		t.Fatalf("no registration line in the RM log:\n%s", c.logTail("rm.log", 60))
	}
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
