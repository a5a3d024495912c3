package integration

import "testing"

// TestHadoop3OnBobbinRMAndNM runs the Hadoop 3.1.1 distributed shell and `pi 2 10` with the
// 3.1.1 clients, MapReduce AM and tasks on Bobbin's RM and Bobbin's NM.
func TestHadoop3OnBobbinRMAndNM(t *testing.T) {
	c := newNSClusterVersion(t, hadoop3)
	c.bobbinNM = true
	runDShellAndPi(t, c)
}

// TestHadoop3ApacheNMUnderBobbinRM: an unchanged Apache 3.1.1 NodeManager under Bobbin's
// RM runs the 3.1.1 distributed shell and pi.
func TestHadoop3ApacheNMUnderBobbinRM(t *testing.T) {
	c := newNSClusterVersion(t, hadoop3)
	runDShellAndPi(t, c)
}

// TestHadoop3BobbinNMUnderApacheRM: Bobbin's NodeManager serves an unchanged Apache 3.1.1
// ResourceManager.
func TestHadoop3BobbinNMUnderApacheRM(t *testing.T) {
	c := newNSClusterVersion(t, hadoop3)
	c.bobbinNM, c.apacheRM = true, true
	runDShellAndPi(t, c)
}
