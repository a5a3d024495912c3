package integration

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/internal/kdctest"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
)

// TestKerberosClusterWebCallersWithoutSPNEGO: RPC kerberized (a real MIT KDC), the web
// ports left at simple authentication, yarn.acl.enable and hadoop.security.authorization
// on, as an attacker on the host found them. A user.name proves nothing there: every web
// caller is the static user dr.who, who may submit, kill, move, reprioritize or
// relabel nothing (403 "The default static user cannot carry out this operation.", as
// RMWebServices answers), set no log level on either daemon, read no container logs,
// and (with hadoop.security.instrumentation.requires.admin) see no /jmx, /conf or
// /stacks. Reads that need no ACL still work.
func TestKerberosClusterWebCallersWithoutSPNEGO(t *testing.T) {
	k := kdctest.Start(t, "BOBBIN.TEST")
	rmKeytab := k.Keytab(t, "rm.keytab", "rm/localhost")
	nmKeytab := k.Keytab(t, "nm.keytab", "nm/localhost")
	t.Setenv("KRB5_CONFIG", k.Krb5Conf())
	dir := t.TempDir()
	rmWeb, nmWeb := fmt.Sprintf("127.0.0.1:%d", freePort(t)), fmt.Sprintf("127.0.0.1:%d", freePort(t))
	site := map[string]string{
		"yarn.resourcemanager.hostname":                           "127.0.0.1",
		"yarn.resourcemanager.address":                            fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"yarn.resourcemanager.resource-tracker.address":           fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"yarn.resourcemanager.scheduler.address":                  fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"yarn.resourcemanager.webapp.address":                     rmWeb,
		"yarn.resourcemanager.admin.address":                      fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"yarn.resourcemanager.principal":                          "rm/_HOST@BOBBIN.TEST",
		"yarn.resourcemanager.keytab":                             rmKeytab,
		"yarn.resourcemanager.nodemanagers.heartbeat-interval-ms": "500",
		"yarn.acl.enable":                                         "true",
		"yarn.admin.acl":                                          "yarn",
		"yarn.nodemanager.hostname":                               "127.0.0.1",
		"yarn.nodemanager.address":                                fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"yarn.nodemanager.localizer.address":                      fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"yarn.nodemanager.webapp.address":                         nmWeb,
		"yarn.nodemanager.local-dirs":                             filepath.Join(dir, "local"),
		"yarn.nodemanager.log-dirs":                               filepath.Join(dir, "logs"),
		"yarn.nodemanager.resource.memory-mb":                     "2048",
		"yarn.nodemanager.principal":                              "nm/_HOST@BOBBIN.TEST",
		"yarn.nodemanager.keytab":                                 nmKeytab,
	}
	writeConf(t, dir, site)
	body := "<?xml version=\"1.0\"?>\n<configuration>\n" + prop("hadoop.security.authentication", "kerberos") +
		prop("hadoop.security.authorization", "true") + prop("hadoop.security.instrumentation.requires.admin", "true") +
		"</configuration>\n"
	if err := os.WriteFile(filepath.Join(dir, "core-site.xml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	rm := startDaemon(t, "resourcemanager", "--conf", dir)
	rm.waitListening(t, rmWeb)
	nm := startDaemon(t, "nodemanager", "--conf", dir)
	if !testutil.Poll(30*time.Second, func() bool { return strings.Contains(rm.Log(), "NodeManager registered") }) {
		t.Fatalf("the NM did not register:\n%s\n%s", rm.Log(), nm.Log())
	}
	client := &http.Client{Timeout: 20 * time.Second}
	call := func(method, url, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, url, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	rmBase, nmBase := "http://"+rmWeb, "http://"+nmWeb
	const static = "The default static user cannot carry out this operation."
	app := "application_1_0001"
	for _, w := range []struct{ method, path, body string }{
		{"POST", "/ws/v1/cluster/apps/new-application?user.name=alice", ""},
		{"POST", "/ws/v1/cluster/apps?user.name=alice", `{"application-id":"` + app + `","application-name":"x","am-container-spec":{"commands":{"command":"id"}}}`},
		{"PUT", "/ws/v1/cluster/apps/" + app + "/state?user.name=yarn", `{"state":"KILLED"}`},
		{"PUT", "/ws/v1/cluster/apps/" + app + "/queue?user.name=yarn", `{"queue":"default"}`},
		{"PUT", "/ws/v1/cluster/apps/" + app + "/priority?user.name=yarn", `{"priority":5}`},
		{"POST", "/ws/v1/cluster/add-node-labels?user.name=yarn", `{"nodeLabelInfo":[{"name":"x"}]}`},
	} {
		if code, got := call(w.method, rmBase+w.path, w.body); code != http.StatusForbidden || !strings.Contains(got, static) {
			t.Errorf("%s %s: %d %q, want 403 %q", w.method, w.path, code, got, static)
		}
	}
	if !strings.Contains(rm.Log(), "web write by the unauthenticated static user refused") {
		t.Errorf("the refusals are not logged:\n%s", tail(rm.Log(), 20))
	}
	for _, base := range []string{rmBase, nmBase} {
		if code, got := call("GET", base+"/logLevel?log=org.apache.hadoop&level=DEBUG&user.name=yarn", ""); code != http.StatusForbidden ||
			!strings.Contains(got, "Unauthenticated users are not authorized to access this page.") {
			t.Errorf("%s /logLevel: %d %q", base, code, got)
		}
		for _, p := range []string{"/jmx", "/conf", "/stacks", "/prom"} {
			if code, _ := call("GET", base+p+"?user.name=yarn", ""); code != http.StatusForbidden {
				t.Errorf("%s%s: %d, want 403 (instrumentation requires an administrator)", base, p, code)
			}
		}
	}
	if code, got := call("GET", nmBase+"/ws/v1/node/containerlogs/container_1_0001_01_000001/stdout?user.name=alice", ""); code != http.StatusForbidden ||
		!strings.Contains(got, "User [dr.who] is not authorized to view the logs") {
		t.Errorf("container log read: %d %q", code, got)
	}
	// What needs no ACL is still served to the static user.
	if code, got := call("GET", rmBase+"/ws/v1/cluster/info", ""); code != 200 || !strings.Contains(got, "clusterInfo") {
		t.Errorf("cluster info: %d %q", code, got)
	}
	if code, _ := call("GET", nmBase+"/ws/v1/node/info", ""); code != 200 {
		t.Errorf("node info: %d", code)
	}
}
