package integration

import "testing"

// TestHadoop3OnBobbinRMAndNM runs the Hadoop 3.1.1 distributed shell and `pi 2 10` with the
// 3.1.1 clients, MapReduce AM and tasks on Bobbin's RM and Bobbin's NM.
func TestHadoop3OnBobbinRMAndNM(t *testing.T) {
	c := newNSClusterVersion(t, hadoop3)
	c.bobbinNM = true
	runDShellAndPi(t, c)
}
