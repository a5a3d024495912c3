// Package kdctest runs a real MIT Kerberos KDC (Debian's krb5-kdc) for tests: a private
// realm in a temporary directory, listening on a loopback port, with principals and
// keytabs made by kadmin.local. Tests that need it skip with a message when the KDC is not
// installed (`.ci/run` installs it).
package kdctest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// KDC is a running KDC for one realm.
type KDC struct {
	Realm string
	Dir   string
	Port  int
	env   []string
}

// binaries are the MIT tools the KDC needs.
var binaries = []string{"krb5kdc", "kdb5_util", "kadmin.local"}

// find looks a tool up on PATH and in /usr/sbin (not on a non-root PATH).
func find(name string) (string, bool) {
	if p, err := exec.LookPath(name); err == nil {
		return p, true
	}
	p := filepath.Join("/usr/sbin", name)
	if _, err := os.Stat(p); err == nil {
		return p, true
	}
	return "", false
}

// Start creates realm's database in a temporary directory and starts krb5kdc on a free
// loopback port; it stops when the test ends. It skips the test when the KDC is missing.
func Start(t *testing.T, realm string) *KDC {
	t.Helper()
	for _, b := range binaries {
		if _, ok := find(b); !ok {
			t.Skipf("MIT Kerberos KDC not installed (%s missing; apt-get install krb5-kdc krb5-admin-server krb5-user)", b)
		}
	}
	k := &KDC{Realm: realm, Dir: t.TempDir(), Port: freePort(t)}
	kdcConf := fmt.Sprintf(`[kdcdefaults]
 kdc_ports = %[2]d
 kdc_tcp_ports = %[2]d
[realms]
 %[1]s = {
  database_name = %[3]s/principal
  key_stash_file = %[3]s/stash
  acl_file = %[3]s/kadm5.acl
  max_life = 10h
  max_renewable_life = 7d
  supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
 }
`, realm, k.Port, k.Dir)
	krb5Conf := fmt.Sprintf(`[libdefaults]
 default_realm = %[1]s
 dns_lookup_realm = false
 dns_lookup_kdc = false
 rdns = false
 udp_preference_limit = 1
 forwardable = true
 default_tkt_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
 default_tgs_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
 permitted_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
[realms]
 %[1]s = {
  kdc = 127.0.0.1:%[2]d
 }
[domain_realm]
 localhost = %[1]s
 127.0.0.1 = %[1]s
`, realm, k.Port)
	for name, body := range map[string]string{"kdc.conf": kdcConf, "krb5.conf": krb5Conf, "kadm5.acl": "*/admin@" + realm + " *\n"} {
		if err := os.WriteFile(filepath.Join(k.Dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	k.env = append(os.Environ(), "KRB5_CONFIG="+k.Krb5Conf(), "KRB5_KDC_PROFILE="+filepath.Join(k.Dir, "kdc.conf"),
		"KRB5CCNAME="+filepath.Join(k.Dir, "ccache"))
	k.run(t, "kdb5_util", "create", "-s", "-r", realm, "-P", "master-"+realm)
	bin, _ := find("krb5kdc")
	cmd := exec.Command(bin, "-n", "-r", realm)
	cmd.Env = k.env
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatalf("krb5kdc: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", k.Addr(), 100*time.Millisecond); err == nil {
			c.Close()
			break
		}
		select {
		case <-done:
			t.Fatalf("krb5kdc exited: %s", log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("krb5kdc not listening on %s: %s", k.Addr(), log.String())
		}
	}
	return k
}

// Addr is the KDC's host:port.
func (k *KDC) Addr() string { return fmt.Sprintf("127.0.0.1:%d", k.Port) }

// Krb5Conf is the client configuration file naming this KDC (for KRB5_CONFIG and for
// -Djava.security.krb5.conf).
func (k *KDC) Krb5Conf() string { return filepath.Join(k.Dir, "krb5.conf") }

// Env is the environment the MIT tools need to use this realm (KRB5_CONFIG, a private
// credentials cache).
func (k *KDC) Env() []string { return append([]string(nil), k.env...) }

// AddPrincipal creates principal (without the realm) with password.
func (k *KDC) AddPrincipal(t *testing.T, principal, password string) {
	t.Helper()
	k.run(t, "kadmin.local", "-r", k.Realm, "-q", fmt.Sprintf("addprinc -pw %s %s", password, principal))
}

// Keytab creates principals (without the realm) with random keys and writes their keys to
// a new keytab file, whose path it returns.
func (k *KDC) Keytab(t *testing.T, name string, principals ...string) string {
	t.Helper()
	path := filepath.Join(k.Dir, name)
	for _, p := range principals {
		k.run(t, "kadmin.local", "-r", k.Realm, "-q", "addprinc -randkey "+p)
		k.run(t, "kadmin.local", "-r", k.Realm, "-q", fmt.Sprintf("ktadd -k %s %s", path, p))
	}
	return path
}

func (k *KDC) run(t *testing.T, tool string, args ...string) string {
	t.Helper()
	bin, _ := find(tool)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = k.env
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "error") {
		t.Fatalf("%s %v: %v\n%s", tool, args, err, out)
	}
	return string(out)
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
