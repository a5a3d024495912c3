package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/client/rmclient"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/token"
)

// TestYarnCLIAgainstBobbinRM runs the real Hadoop 2.7.3 yarn CLI against
// `bobbin resourcemanager`, both reading the same configuration directory.
func TestYarnCLIAgainstBobbinRM(t *testing.T) {
	home := requireHadoop(t)
	confDir := t.TempDir()
	rmAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	webAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	writeConf(t, confDir, map[string]string{
		"yarn.resourcemanager.hostname":                 "127.0.0.1",
		"yarn.resourcemanager.address":                  rmAddr,
		"yarn.resourcemanager.resource-tracker.address": fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"yarn.resourcemanager.scheduler.address":        fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"yarn.resourcemanager.webapp.address":           webAddr,
		"yarn.resourcemanager.admin.address":            fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"yarn.scheduler.maximum-allocation-mb":          "2048",
		"yarn.node-labels.enabled":                      "true",
		"yarn.node-labels.fs-store.root-dir":            "file://" + filepath.Join(confDir, "node-labels"),
		"yarn.resourcemanager.nodes.exclude-path":       filepath.Join(confDir, "exclude"),
	})
	os.WriteFile(filepath.Join(confDir, "exclude"), nil, 0o644)
	rm := startDaemon(t, "resourcemanager", "--conf", confDir, "--log-level", "debug")
	rm.waitListening(t, rmAddr)

	check := func(name string, wantCode int, out string, code int, wants ...string) {
		t.Helper()
		if code != wantCode {
			t.Errorf("%s: exit %d, want %d\n%s", name, code, wantCode, out)
		}
		for _, w := range wants {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q\n%s", name, w, out)
			}
		}
	}

	code, out := yarnCLI(t, home, confDir, nil, "application", "-list")
	check("application -list", 0, out, code, "Total number of applications (application-types: [] and states: [SUBMITTED, ACCEPTED, RUNNING]):0")

	// yarn daemonlog: a level per logger. The IPC server's lines (debug, for each call)
	// stop at ERROR while the rest of the RM stays at DEBUG.
	code, out = yarnCLI(t, home, confDir, nil, "daemonlog", "-getlevel", webAddr, "org.apache.hadoop.yarn.server.resourcemanager.ResourceManager")
	check("daemonlog -getlevel", 0, out, code, "Submitted Log Name: org.apache.hadoop.yarn.server.resourcemanager.ResourceManager", "Effective Level: DEBUG")
	code, out = yarnCLI(t, home, confDir, nil, "daemonlog", "-setlevel", webAddr, "org.apache.hadoop.ipc", "ERROR")
	check("daemonlog -setlevel", 0, out, code, "Submitted Level: ERROR", "Setting Level to ERROR ...", "Effective Level: ERROR")
	code, out = yarnCLI(t, home, confDir, nil, "daemonlog", "-getlevel", webAddr, "org.apache.hadoop.ipc.Server")
	check("daemonlog -getlevel under a set name", 0, out, code, "Effective Level: ERROR")
	code, out = yarnCLI(t, home, confDir, nil, "daemonlog", "-getlevel", webAddr, "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler")
	check("daemonlog -getlevel beside a set name", 0, out, code, "Effective Level: DEBUG")
	ipcLines := func() int { return strings.Count(rm.Log(), `msg="IPC connection established"`) }
	ipcBefore := ipcLines()
	code, out = yarnCLI(t, home, confDir, nil, "application", "-list")
	check("application -list with the IPC logger at ERROR", 0, out, code, "Total number of applications")
	if after := ipcLines(); after > ipcBefore || ipcBefore == 0 {
		t.Errorf("the IPC server's debug lines: %d before its logger was set to ERROR, %d after:\n%s", ipcBefore, after, tail(rm.Log(), 20))
	}
	code, out = yarnCLI(t, home, confDir, nil, "daemonlog", "-setlevel", webAddr, "org.apache.hadoop.ipc", "DEBUG")
	check("daemonlog -setlevel back", 0, out, code, "Effective Level: DEBUG")

	code, out = yarnCLI(t, home, confDir, nil, "node", "-list", "-all")
	check("node -list -all", 0, out, code, "Total Nodes:0")

	code, out = yarnCLI(t, home, confDir, nil, "queue", "-status", "default")
	check("queue -status default", 0, out, code, "Queue Name : default", "State : RUNNING", "Capacity : 70.0%", "Maximum Capacity : 90.0%")

	code, out = yarnCLI(t, home, confDir, nil, "queue", "-status", "nosuchqueue")
	check("queue -status nosuchqueue", 255, out, code, "Cannot get queue from RM by queueName = nosuchqueue")

	// The 2.7.3 CLI exits -1 (255) after printing the message.
	code, out = yarnCLI(t, home, confDir, nil, "application", "-status", "application_1_0001")
	check("application -status", 255, out, code, "Application with id 'application_1_0001' doesn't exist in RM")

	// With a token file the client opens the connection with SASL; the RM answers
	// NEGOTIATE with SIMPLE-only SUCCESS and the call proceeds.
	creds := token.NewCredentials()
	creds.Tokens["unrelated"] = &token.Token{Identifier: []byte("some-identifier"), Password: []byte("pw"), Kind: "UNRELATED_KIND", Service: "192.0.2.1:9999"}
	tokenFile := filepath.Join(confDir, "tokens.bin")
	if err := os.WriteFile(tokenFile, creds.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	before := strings.Count(rm.Log(), "SASL negotiation")
	code, out = yarnCLI(t, home, confDir, []string{"HADOOP_TOKEN_FILE_LOCATION=" + tokenFile}, "application", "-list")
	check("application -list with a token file", 0, out, code, "Total number of applications (application-types: [] and states: [SUBMITTED, ACCEPTED, RUNNING]):0")
	if after := strings.Count(rm.Log(), "SASL negotiation"); after <= before {
		t.Errorf("the client with a token file did not negotiate SASL (log lines %d -> %d)", before, after)
	}

	// An application submitted through the protocol shows in the CLI, and the CLI kills it.
	cl := rmclient.New(rmAddr, "root", rpc.ClientOptions{ConnectRetries: -1})
	defer cl.Close()
	ctx := context.Background()
	na, err := cl.GetNewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	appID := records.AppIDFromProto(na.GetApplicationId()).String()
	err = cl.Call(ctx, "submitApplication", &yarnpb.SubmitApplicationRequestProto{ApplicationSubmissionContext: &yarnpb.ApplicationSubmissionContextProto{
		ApplicationId: na.GetApplicationId(), ApplicationName: proto.String("sleeper"), Queue: proto.String("default"),
		Resource: &yarnpb.ResourceProto{Memory: proto.Int64(1024), VirtualCores: proto.Int32(1)}}}, &yarnpb.SubmitApplicationResponseProto{})
	if err != nil {
		t.Fatal(err)
	}
	code, out = yarnCLI(t, home, confDir, nil, "application", "-list")
	check("application -list after submit", 0, out, code, "Total number of applications (application-types: [] and states: [SUBMITTED, ACCEPTED, RUNNING]):1", appID, "ACCEPTED")
	code, out = yarnCLI(t, home, confDir, nil, "application", "-kill", appID)
	check("application -kill", 0, out, code, "Killing application "+appID)
	code, out = yarnCLI(t, home, confDir, nil, "application", "-list", "-appStates", "ALL")
	check("application -list -appStates ALL", 0, out, code, appID, "KILLED")

	// yarn rmadmin -refreshQueues: a new queue appears; a broken file is refused and the
	// old queues stay.
	cs := filepath.Join(confDir, "capacity-scheduler.xml")
	os.WriteFile(cs, []byte("<?xml version=\"1.0\"?>\n<configuration>\n"+
		prop("yarn.scheduler.capacity.root.queues", "default,analytics,adhoc")+
		prop("yarn.scheduler.capacity.root.default.capacity", "50")+
		prop("yarn.scheduler.capacity.root.analytics.capacity", "30")+
		prop("yarn.scheduler.capacity.root.adhoc.capacity", "20")+"</configuration>\n"), 0o644)
	code, out = yarnCLI(t, home, confDir, nil, "rmadmin", "-refreshQueues")
	check("rmadmin -refreshQueues", 0, out, code)
	code, out = yarnCLI(t, home, confDir, nil, "queue", "-status", "adhoc")
	check("queue -status adhoc after refresh", 0, out, code, "Queue Name : adhoc", "Capacity : 20.0%")
	os.WriteFile(cs, []byte("<configuration><property><name>yarn.scheduler.capacity.root.queues</name><value>x</value></property></configuration>"), 0o644)
	code, out = yarnCLI(t, home, confDir, nil, "rmadmin", "-refreshQueues")
	if code == 0 || !strings.Contains(out, "yarn.scheduler.capacity.root.x.capacity") {
		t.Errorf("refresh with a broken file: exit %d\n%s", code, out)
	}
	code, out = yarnCLI(t, home, confDir, nil, "queue", "-status", "adhoc")
	check("queue -status adhoc after a failed refresh", 0, out, code, "Queue Name : adhoc")
	// Both refreshes are in the audit log, as RMAuditLogger writes them (the failure with
	// its reason), and so are the submission and the kill.
	for _, want := range []string{`OPERATION=refreshQueues\tTARGET=AdminService\tRESULT=SUCCESS`,
		`OPERATION=refreshQueues\tTARGET=AdminService\tRESULT=FAILURE\tDESCRIPTION=Failed to re-init queues`,
		`OPERATION=Submit Application Request\tTARGET=ClientRMService\tRESULT=SUCCESS\tAPPID=` + appID,
		`OPERATION=Kill Application Request\tTARGET=ClientRMService\tRESULT=SUCCESS\tAPPID=` + appID, "component=rmaudit"} {
		if !strings.Contains(rm.Log(), want) {
			t.Errorf("the RM's audit lines lack %q:\n%s", want, tail(rm.Log(), 30))
		}
	}

	// Node administration: include/exclude refresh and node labels, 2.7.3 CLI syntax.
	code, out = yarnCLI(t, home, confDir, nil, "rmadmin", "-refreshNodes")
	check("rmadmin -refreshNodes", 0, out, code)
	code, out = yarnCLI(t, home, confDir, nil, "rmadmin", "-addToClusterNodeLabels", "gpu,ssd")
	check("rmadmin -addToClusterNodeLabels", 0, out, code)
	code, out = yarnCLI(t, home, confDir, nil, "rmadmin", "-replaceLabelsOnNode", "worker1=gpu")
	check("rmadmin -replaceLabelsOnNode", 0, out, code)
	code, out = yarnCLI(t, home, confDir, nil, "rmadmin", "-removeFromClusterNodeLabels", "ssd")
	check("rmadmin -removeFromClusterNodeLabels", 0, out, code)
	code, out = yarnCLI(t, home, confDir, nil, "cluster", "-lnl")
	check("cluster -lnl", 0, out, code, "gpu")
	if strings.Contains(out, "ssd") {
		t.Errorf("removed label still listed:\n%s", out)
	}
	code, out = yarnCLI(t, home, confDir, nil, "rmadmin", "-addToClusterNodeLabels", "-bad")
	if code == 0 || !strings.Contains(out, "now it is=-bad") {
		t.Errorf("bad label name: exit %d\n%s", code, out)
	}

	rm.stop(t)
	if !strings.Contains(rm.Log(), "ResourceManager stopped") {
		t.Errorf("no clean-shutdown line in the log:\n%s", rm.Log())
	}
}
