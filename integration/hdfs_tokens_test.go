package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/internal/testutil"
)

// TestKerberosHDFSTokenRenewal: the RM renews the HDFS delegation tokens an application
// submits and cancels them when it ends, at a real kerberized 2.7.3 NameNode (keytabs from
// a real MIT KDC). The 2.7.3 job client, told of the NameNode by mapreduce.job.hdfs-servers,
// fetches a token for it with the RM as renewer and submits it with pi; the NameNode's
// tokens live 4 s unless renewed, so a job of ~20 s keeps its token only through the RM's
// renewals. The NameNode's edit log shows the renewals and the cancellation. A token
// whose renewer is somebody else (`hdfs fetchdt --renewer bob`) cannot be renewed by the
// RM: the submission fails with the Java RM's "Failed to renew token: Kind: ..." text.
func TestKerberosHDFSTokenRenewal(t *testing.T) {
	s := newSecureYarn(t, "authentication", map[string]string{
		"yarn.resourcemanager.delayed.delegation-token.removal-interval-ms": "1000",
	})
	if _, err := os.Stat(hadoopJar(s.home, hadoop2, "hdfs", "hadoop-hdfs")); err != nil {
		t.Skipf("needs the 2.7.3 HDFS jar to run a NameNode: %v", err)
	}
	nnKeytab := s.k.Keytab(t, "nn.keytab", "nn/localhost", "HTTP/localhost")
	nnAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	nameDir := filepath.Join(s.dir, "nn")
	hdfs := "<?xml version=\"1.0\"?>\n<configuration>\n" +
		prop("dfs.namenode.name.dir", nameDir) +
		prop("dfs.namenode.rpc-address", nnAddr) +
		prop("dfs.namenode.http-address", fmt.Sprintf("127.0.0.1:%d", freePort(t))) +
		prop("dfs.namenode.secondary.http-address", fmt.Sprintf("127.0.0.1:%d", freePort(t))) +
		prop("dfs.namenode.kerberos.principal", "nn/_HOST@BOBBIN.TEST") +
		prop("dfs.namenode.keytab.file", nnKeytab) +
		prop("dfs.web.authentication.kerberos.principal", "HTTP/_HOST@BOBBIN.TEST") +
		prop("dfs.web.authentication.kerberos.keytab", nnKeytab) +
		prop("dfs.block.access.token.enable", "true") +
		prop("dfs.namenode.safemode.extension", "0") +
		prop("dfs.namenode.delegation.token.renew-interval", "4000") +
		"</configuration>\n"
	if err := os.WriteFile(filepath.Join(s.confDir, "hdfs-site.xml"), []byte(hdfs), 0o644); err != nil {
		t.Fatal(err)
	}
	hdfsCmd := func(args ...string) (string, error) {
		cmd := exec.Command(filepath.Join(s.home, "bin", "hdfs"), args...)
		cmd.Dir = s.dir
		cmd.Env = append(hadoopEnv(s.home, s.confDir), s.javaEnv...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := hdfsCmd("namenode", "-format", "-force", "-nonInteractive"); err != nil {
		t.Fatalf("namenode -format: %v\n%s", err, tail(out, 30))
	}
	nn := startHadoopDaemon(t, s.home, s.confDir, s.javaEnv, "hdfs", "namenode")
	nn.waitListening(t, nnAddr)
	s.start(t)

	start := time.Now()
	out, err := s.pi(t, 4*time.Minute, "-Dmapreduce.job.hdfs-servers=hdfs://"+nnAddr)
	if err != nil || !strings.Contains(out, "Estimated value of Pi is") {
		s.fatalPi(t, err, out)
	}
	took := time.Since(start)
	// The application ended; its token is cancelled a removal delay (1 s) later.
	if !testutil.Poll(30*time.Second, func() bool { return strings.Contains(s.rm.Log(), "delegation token cancelled") }) {
		t.Fatalf("the RM did not cancel the HDFS token:\n%s", tail(s.rm.Log(), 40))
	}
	rmLog := s.rm.Log()
	tracked := strings.Count(rmLog, "delegation token renewed and tracked")
	timed := len(regexp.MustCompile(`msg="delegation token renewed" `).FindAllString(rmLog, -1))
	t.Logf("pi took %s; the RM renewed the HDFS token at submission (%d) and %d times while it ran", took.Round(time.Second), tracked, timed)
	if tracked != 1 || !strings.Contains(rmLog, "HDFS_DELEGATION_TOKEN token 1 for alice") {
		t.Fatalf("the RM did not renew the submitted HDFS token at submission:\n%s", tail(rmLog, 40))
	}
	if took > 8*time.Second && timed == 0 {
		t.Fatalf("a %s job's 4 s token was never renewed while it ran:\n%s", took, tail(rmLog, 40))
	}

	// The NameNode's own record: its edit log (the in-progress segment, read by oev).
	edits, _ := filepath.Glob(filepath.Join(nameDir, "current", "edits_inprogress_*"))
	if len(edits) != 1 {
		t.Fatalf("NameNode edit segments in progress: %v", edits)
	}
	xml := filepath.Join(s.dir, "edits.xml")
	if out, err := hdfsCmd("oev", "-i", edits[0], "-o", xml); err != nil {
		t.Fatalf("hdfs oev: %v\n%s", err, out)
	}
	b, err := os.ReadFile(xml)
	if err != nil {
		t.Fatal(err)
	}
	got, renewed, cancelled := strings.Count(string(b), "OP_GET_DELEGATION_TOKEN"), strings.Count(string(b), "OP_RENEW_DELEGATION_TOKEN"), strings.Count(string(b), "OP_CANCEL_DELEGATION_TOKEN")
	t.Logf("NameNode edit log: %d tokens issued, %d renewals, %d cancellations", got, renewed, cancelled)
	if got != 1 || renewed != 1+timed || cancelled != 1 {
		t.Fatalf("the NameNode's edit log does not match the RM's renewals (want 1 issued, %d renewed, 1 cancelled):\n%s", 1+timed, tail(string(b), 60))
	}

	// A token the RM may not renew (renewer bob) fails the submission, as on the Java RM.
	tokFile := filepath.Join(s.dir, "bob.token")
	if out, err := hdfsCmd("fetchdt", "-fs", "hdfs://"+nnAddr, "--renewer", "bob", tokFile); err != nil {
		t.Fatalf("hdfs fetchdt: %v\n%s", err, out)
	}
	// A fresh staging dir: the job client refuses one that exists and is not alice's (on
	// the local file system it is the test's user's).
	out, err = s.pi(t, 2*time.Minute, "-Dyarn.app.mapreduce.am.staging-dir="+filepath.Join(s.dir, "staging-bob"), "-Dmapreduce.job.credentials.binary="+tokFile, "-Dmapreduce.job.hdfs-servers=hdfs://"+nnAddr)
	const want = "Failed to renew token: Kind: HDFS_DELEGATION_TOKEN, Service: "
	if err == nil || !strings.Contains(out, want) || !strings.Contains(out, "HDFS_DELEGATION_TOKEN token 2 for alice") {
		t.Fatalf("pi with a token renewable only by bob: err %v, want %q in:\n%s\nRM:\n%s", err, want, tail(out, 30), tail(s.rm.Log(), 20))
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, want) {
			t.Log(strings.TrimSpace(l))
			break
		}
	}
	if !strings.Contains(s.rm.Log(), "rm tries to renew a token with renewer bob") {
		t.Errorf("the RM's log does not carry the NameNode's refusal:\n%s", tail(s.rm.Log(), 20))
	}
}
