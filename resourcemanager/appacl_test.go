package resourcemanager

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/client/rmclient"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc"
)

// With yarn.acl.enable, an application's submission ACLs (VIEW_APP, MODIFY_APP) decide
// who else sees its details and changes it: others get the Java RM's restricted report
// and refusals; its owner, the users its ACLs name and administrators may.
func TestApplicationACLs(t *testing.T) {
	rm, alice := startRM(t, testConf("yarn.acl.enable", "true", "yarn.admin.acl", "root"))
	as := func(user string) *rmclient.Client {
		c := rmclient.New(rm.ClientAddr().String(), user, rpc.ClientOptions{ConnectRetries: -1, Logger: testutil.QuietLogger()})
		t.Cleanup(func() { c.Close() })
		return c
	}
	bob, carol, root := as("bob"), as("carol"), as("root")
	ctx := context.Background()
	na, err := alice.GetNewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id := na.GetApplicationId()
	err = alice.Call(ctx, "submitApplication", &yarnpb.SubmitApplicationRequestProto{ApplicationSubmissionContext: &yarnpb.ApplicationSubmissionContextProto{
		ApplicationId: id, ApplicationName: proto.String("pi"), Queue: proto.String("default"),
		Resource: &yarnpb.ResourceProto{Memory: proto.Int64(1024), VirtualCores: proto.Int32(1)},
		AmContainerSpec: &yarnpb.ContainerLaunchContextProto{Application_ACLs: []*yarnpb.ApplicationACLMapProto{
			{AccessType: yarnpb.ApplicationAccessTypeProto_APPACCESS_VIEW_APP.Enum(), Acl: proto.String("carol")},
			{AccessType: yarnpb.ApplicationAccessTypeProto_APPACCESS_MODIFY_APP.Enum(), Acl: proto.String("carol")},
		}}}}, &yarnpb.SubmitApplicationResponseProto{})
	if err != nil {
		t.Fatal(err)
	}
	// bob sees the application, without its details.
	rep, err := bob.GetApplicationReport(ctx, id)
	if err != nil || rep.GetUser() != "alice" || rep.GetDiagnostics() != "N/A" || rep.GetTrackingUrl() != "N/A" ||
		rep.GetAppResource_Usage().GetNumUsedContainers() != -1 || rep.GetAmRmToken() != nil {
		t.Fatalf("bob's report: %v %v", rep, err)
	}
	if rep, err := carol.GetApplicationReport(ctx, id); err != nil || rep.GetTrackingUrl() == "N/A" || rep.GetAppResource_Usage().GetNumUsedContainers() == -1 {
		t.Fatalf("carol (VIEW_APP) gets a restricted report: %v %v", rep, err)
	}
	refused := func(who string, err error, class, msg string) {
		t.Helper()
		var re *rpc.RemoteError
		if !errors.As(err, &re) || re.Class != class || !strings.Contains(re.Message, msg) {
			t.Fatalf("%s: %v, want %s: %s", who, err, class, msg)
		}
	}
	var attempts yarnpb.GetApplicationAttemptsResponseProto
	err = bob.Call(ctx, "getApplicationAttempts", &yarnpb.GetApplicationAttemptsRequestProto{ApplicationId: id}, &attempts)
	refused("bob's attempts", err, "org.apache.hadoop.yarn.exceptions.YarnException", "User bob does not have privilage to see this application")
	if err := carol.Call(ctx, "getApplicationAttempts", &yarnpb.GetApplicationAttemptsRequestProto{ApplicationId: id}, &attempts); err != nil {
		t.Fatalf("carol's attempts: %v", err)
	}
	move := func(c *rmclient.Client, queue string) error {
		return c.Call(ctx, "moveApplicationAcrossQueues", &yarnpb.MoveApplicationAcrossQueuesRequestProto{ApplicationId: id, TargetQueue: proto.String(queue)},
			&yarnpb.MoveApplicationAcrossQueuesResponseProto{})
	}
	refused("bob's move", move(bob, "daily"), rpc.ClassAccessControl, "User bob cannot perform operation MODIFY_APP on application_")
	kill := func(c *rmclient.Client) error {
		return c.Call(ctx, "forceKillApplication", &yarnpb.KillApplicationRequestProto{ApplicationId: id}, &yarnpb.KillApplicationResponseProto{})
	}
	refused("bob's kill", kill(bob), rpc.ClassAccessControl, "User bob cannot perform operation MODIFY_APP on application_")
	// The same through REST: bob's view of the application lacks its AM and usage, and its
	// attempts are refused; carol's has them.
	appURL := fmt.Sprintf("http://%s/ws/v1/cluster/apps/%s", rm.WebAddr(), records.AppIDFromProto(id))
	restApp := func(user string) map[string]any {
		var body struct{ App map[string]any }
		getJSON(t, appURL+"?user.name="+user, &body)
		return body.App
	}
	if b, c := restApp("bob"), restApp("carol"); b["user"] != "alice" || b["allocatedMB"] != float64(0) || b["masterNodeId"] != "" ||
		c["resourceInfo"] == nil {
		t.Fatalf("REST views: bob %v, carol %v", b, c)
	}
	if resp, err := http.Get(appURL + "/appattempts?user.name=bob"); err != nil || resp.StatusCode != http.StatusUnauthorized { // AuthorizationException, as Java's GenericExceptionHandler maps it
		t.Fatalf("bob's REST attempts: %v %v", resp, err)
	}
	// The application's page shows bob (and the anonymous static user) nothing of it, as
	// Java's AppBlock; carol sees it.
	pageURL := fmt.Sprintf("http://%s/cluster/app/%s", rm.WebAddr(), records.AppIDFromProto(id))
	for query, want := range map[string]int{"?user.name=bob": http.StatusForbidden, "": http.StatusForbidden, "?user.name=carol": http.StatusOK} {
		resp, err := http.Get(pageURL + query)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want || want == http.StatusForbidden && !strings.Contains(string(body), "are not authorized to view application") {
			t.Errorf("app page %q: %d, want %d", query, resp.StatusCode, want)
		}
	}
	// carol is in the application's MODIFY_APP ACL, root is an administrator.
	if err := move(carol, "default"); err != nil {
		t.Fatalf("carol's move: %v", err)
	}
	if err := kill(root); err != nil {
		t.Fatalf("root's kill: %v", err)
	}
	if rep, _ := alice.GetApplicationReport(ctx, id); rep.GetYarnApplicationState() != yarnpb.YarnApplicationStateProto_KILLED {
		t.Fatalf("after root's kill: %v", rep.GetYarnApplicationState())
	}
}

func getJSON(t *testing.T, url string, into any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}
