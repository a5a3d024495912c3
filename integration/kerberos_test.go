package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/internal/kdctest"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
)

// TestKerberosYarnCLI: `bobbin resourcemanager` with hadoop.security.authentication=kerberos
// against a real MIT KDC and the real 2.7.3 and 3.1.1 `yarn` CLIs. After kinit the CLI lists
// applications (the RM maps alice@BOBBIN.TEST to alice); without a ticket it fails with
// the Java client's GSS error; a client configured for SIMPLE is refused with Java's text.
func TestKerberosYarnCLI(t *testing.T) {
	homes := map[string]string{"2.7.3": requireHadoop(t)}
	if h := hadoopHomeIfPresent(hadoop3); h != "" {
		homes["3.1.1"] = h
	}
	k := kdctest.Start(t, "BOBBIN.TEST")
	k.AddPrincipal(t, "alice", "alice-secret")
	rmKeytab := k.Keytab(t, "rm.keytab", "rm/localhost")
	t.Setenv("KRB5_CONFIG", k.Krb5Conf())

	confDir := t.TempDir()
	rmAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	adminAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	site := map[string]string{
		"yarn.resourcemanager.hostname":                 "127.0.0.1",
		"yarn.resourcemanager.address":                  rmAddr,
		"yarn.resourcemanager.resource-tracker.address": fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"yarn.resourcemanager.scheduler.address":        fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"yarn.resourcemanager.webapp.address":           fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"yarn.resourcemanager.admin.address":            adminAddr,
		"yarn.resourcemanager.principal":                "rm/_HOST@BOBBIN.TEST",
		"yarn.resourcemanager.keytab":                   rmKeytab,
		"yarn.acl.enable":                               "true",
		"yarn.admin.acl":                                "alice",
	}
	writeConf(t, confDir, site)
	core := func(dir, auth string) {
		body := "<?xml version=\"1.0\"?>\n<configuration>\n" + prop("fs.defaultFS", "file:///") + prop("hadoop.tmp.dir", filepath.Join(dir, "tmp")) +
			prop("hadoop.security.authentication", auth) + "</configuration>\n"
		if err := os.WriteFile(filepath.Join(dir, "core-site.xml"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	core(confDir, "kerberos")
	rm := startDaemon(t, "resourcemanager", "--conf", confDir)
	rm.waitListening(t, rmAddr)

	// A client configured for SIMPLE: the same files but core-site.xml.
	simpleDir := t.TempDir()
	for _, f := range []string{"yarn-site.xml", "capacity-scheduler.xml", "log4j.properties"} {
		b, _ := os.ReadFile(filepath.Join(confDir, f))
		os.WriteFile(filepath.Join(simpleDir, f), b, 0o644)
	}
	core(simpleDir, "simple")
	// A client that gives up quickly (3.1.1 would otherwise retry for minutes).
	impatientDir := t.TempDir()
	site["yarn.resourcemanager.connect.max-wait.ms"] = "2000"
	site["yarn.resourcemanager.connect.retry-interval.ms"] = "1000"
	site["yarn.client.failover-max-attempts"] = "1"
	writeConf(t, impatientDir, site)
	core(impatientDir, "kerberos")

	// Hadoop's KerberosUtil reads the default realm from sun.security.krb5.Config by
	// reflection, which Java 17 allows only when the package is opened.
	jvm := javaOpts + " --add-opens java.security.jgss/sun.security.krb5=ALL-UNNAMED -Djava.security.krb5.conf=" + k.Krb5Conf()
	emptyCache := filepath.Join(t.TempDir(), "no-ticket")
	for version, home := range homes {
		env := func(cache string) []string {
			return []string{"HADOOP_OPTS=" + jvm, "YARN_OPTS=" + jvm, "KRB5CCNAME=" + cache, "KRB5_CONFIG=" + k.Krb5Conf()}
		}
		withTicket := env(filepath.Join(k.Dir, "ccache"))
		kinit(t, k, "alice", "alice-secret")
		code, out := yarnCLI(t, home, confDir, withTicket, "application", "-list")
		if code != 0 || !strings.Contains(out, "Total number of applications") {
			t.Errorf("%s: application -list with a ticket: exit %d\n%s", version, code, out)
		}
		code, out = yarnCLI(t, home, confDir, withTicket, "rmadmin", "-refreshQueues")
		if code != 0 {
			t.Errorf("%s: rmadmin -refreshQueues as alice (admin by principal short name): exit %d\n%s", version, code, out)
		}
		// Without a ticket: 2.7.3 fails the GSS exchange, 3.1.1 does not start one (its
		// retries are cut short: they would go on for minutes).
		code, out = yarnCLI(t, home, impatientDir, env(emptyCache), "application", "-list")
		if code == 0 || !strings.Contains(out, "GSS initiate failed") && !strings.Contains(out, "Client cannot authenticate via:[TOKEN, KERBEROS]") {
			t.Errorf("%s: application -list without a ticket: exit %d\n%s", version, code, out)
		}
		// RM delegation tokens with Hadoop's client classes (YarnClient, Token.renew/cancel).
		out = runRMTokenClient(t, home, confDir, withTicket, "alice")
		for _, want := range []string{"token owner=alice@BOBBIN.TEST renewer=alice kind=RM_DELEGATION_TOKEN", "applications listed with the token: ",
			"renewed: true", "cancelled\n", "cancelled token refused: ", "can't be found in cache"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: delegation tokens: no %q in\n%s", version, want, out)
			}
		}
		if version == "2.7.3" {
			code, out = yarnCLI(t, home, simpleDir, env(emptyCache), "application", "-list")
			// TOKEN first, as from the Java RM: the client port takes RM delegation tokens.
			if code == 0 || !strings.Contains(out, "org.apache.hadoop.security.AccessControlException: SIMPLE authentication is not enabled.  Available:[TOKEN, KERBEROS]") {
				t.Errorf("%s: a SIMPLE client: exit %d\n%s", version, code, out)
			}
		}
	}
}

// runRMTokenClient compiles testdata/RMTokenClient.java against a Hadoop's classpath and
// runs it with renewer as its argument.
func runRMTokenClient(t *testing.T, home, confDir string, env []string, renewer string) string {
	t.Helper()
	javac, err := exec.LookPath("javac")
	if err != nil {
		t.Skip("javac not found: skipping the delegation-token client")
	}
	cpCmd := exec.Command(filepath.Join(home, "bin", "yarn"), "classpath")
	cpCmd.Env = append(hadoopEnv(home, confDir), env...)
	cp, err := cpCmd.Output()
	if err != nil {
		t.Fatalf("yarn classpath: %v", err)
	}
	classes := t.TempDir()
	classpath := strings.TrimSpace(string(cp))
	if b, err := exec.Command(javac, "-cp", classpath, "-d", classes, "testdata/RMTokenClient.java").CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append(strings.Fields(jvmKerberosOpts(env)), "-cp", confDir+":"+classpath+":"+classes, "RMTokenClient", renewer)
	cmd := exec.CommandContext(ctx, "java", args...)
	cmd.Env = append(hadoopEnv(home, confDir), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("RMTokenClient: %v", err)
	}
	return string(out)
}

// jvmKerberosOpts is the HADOOP_OPTS of env (the JVM options a Java client needs here).
func jvmKerberosOpts(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HADOOP_OPTS="); ok {
			return v
		}
	}
	return ""
}

func kinit(t *testing.T, k *kdctest.KDC, principal, password string) {
	t.Helper()
	cmd := exec.Command("kinit", principal)
	cmd.Env = k.Env()
	cmd.Stdin = strings.NewReader(password + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kinit %s: %v\n%s", principal, err, out)
	}
}

// TestSPNEGOWeb: with hadoop.http.authentication.type=kerberos the RM's web port wants
// SPNEGO (a real MIT KDC, curl --negotiate after kinit): without a ticket 401 and
// "WWW-Authenticate: Negotiate"; with one the call is served as the principal's short
// name whatever user.name says, and the hadoop.auth cookie then serves without
// negotiating; a forged cookie is not taken.
func TestSPNEGOWeb(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not found")
	}
	k := kdctest.Start(t, "BOBBIN.TEST")
	k.AddPrincipal(t, "alice", "alice-secret")
	rmKeytab := k.Keytab(t, "rm.keytab", "rm/localhost", "HTTP/localhost")
	t.Setenv("KRB5_CONFIG", k.Krb5Conf())
	confDir := t.TempDir()
	web := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	site := map[string]string{
		"yarn.resourcemanager.hostname":                  "127.0.0.1",
		"yarn.resourcemanager.address":                   fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"yarn.resourcemanager.resource-tracker.address":  fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"yarn.resourcemanager.scheduler.address":         fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"yarn.resourcemanager.webapp.address":            web,
		"yarn.resourcemanager.admin.address":             fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"yarn.resourcemanager.principal":                 "rm/_HOST@BOBBIN.TEST",
		"yarn.resourcemanager.keytab":                    rmKeytab,
		"yarn.resourcemanager.webapp.spnego-principal":   "HTTP/_HOST@BOBBIN.TEST",
		"yarn.resourcemanager.webapp.spnego-keytab-file": rmKeytab,
	}
	writeConf(t, confDir, site)
	body := "<?xml version=\"1.0\"?>\n<configuration>\n" + prop("hadoop.security.authentication", "kerberos") +
		prop("hadoop.http.authentication.type", "kerberos") + "</configuration>\n"
	os.WriteFile(filepath.Join(confDir, "core-site.xml"), []byte(body), 0o644)
	rm := startDaemon(t, "resourcemanager", "--conf", confDir)
	rm.waitListening(t, web)
	_, port, _ := strings.Cut(web, ":")
	base := "http://localhost:" + port // the SPN curl asks for is HTTP/localhost
	jar := filepath.Join(t.TempDir(), "cookies")
	curl := func(env []string, args ...string) string {
		cmd := exec.Command("curl", append([]string{"-s", "-i", "--max-time", "20"}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	noTicket := []string{"KRB5CCNAME=" + filepath.Join(t.TempDir(), "none")}
	if out := curl(noTicket, base+"/ws/v1/cluster/info"); !strings.Contains(out, "401") || !strings.Contains(strings.ToLower(out), "www-authenticate: negotiate") {
		t.Fatalf("without credentials:\n%s", out)
	}
	// OPTIONS, which Hadoop's client authenticator sends first, wants SPNEGO too.
	if out := curl(noTicket, "-X", "OPTIONS", base+"/ws/v1/cluster/info"); !strings.Contains(out, "401") || !strings.Contains(strings.ToLower(out), "www-authenticate: negotiate") {
		t.Fatalf("OPTIONS without credentials:\n%s", out)
	}
	kinit(t, k, "alice", "alice-secret")
	ticket := k.Env()
	out := curl(ticket, "--negotiate", "-u", ":", "-c", jar, "-X", "POST", base+"/ws/v1/cluster/apps/new-application?user.name=mallory")
	if !strings.Contains(out, "200 OK") || !strings.Contains(out, "application-id") || !strings.Contains(out, "hadoop.auth=") {
		t.Fatalf("with a ticket:\n%s", out)
	}
	// The daemon's output reaches its buffer through a pipe.
	testutil.Poll(5*time.Second, func() bool { return strings.Contains(rm.Log(), "via=rest") })
	if !strings.Contains(rm.Log(), `msg="allocated new application id"`) || !strings.Contains(rm.Log(), "via=rest") || !strings.Contains(rm.Log(), "user=alice") || strings.Contains(rm.Log(), "user=mallory") {
		t.Fatalf("the REST caller is not the principal's short name:\n%s", rm.Log())
	}
	if out := curl(noTicket, "-b", jar, base+"/ws/v1/cluster/info"); !strings.Contains(out, "200 OK") {
		t.Fatalf("with the hadoop.auth cookie:\n%s", out)
	}
	if out := curl(noTicket, "-b", "hadoop.auth=dT1tYWxsb3J5.AAAA", base+"/ws/v1/cluster/info"); !strings.Contains(out, "401") {
		t.Fatalf("with a forged cookie:\n%s", out)
	}
}
