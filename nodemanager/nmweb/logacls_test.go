package nmweb

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/conf"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/nodemanager/containers"
	"github.com/bobbin-yarn/bobbin/records"
)

// With yarn.acl.enable, a named web caller reads an application's container logs only as
// its owner, an administrator or a user its VIEW_APP ACL admits; anonymous callers are not
// checked (simple authentication), and without ACLs nobody is.
func TestContainerLogACLs(t *testing.T) {
	c := conf.New()
	c.Set("yarn.acl.enable", "true")
	c.Set("yarn.admin.acl", "root")
	acls, err := ReadLogACLs(c, time.Now, nil)
	if err != nil {
		t.Fatal(err)
	}
	app := records.ApplicationID{ClusterTimestamp: 1, ID: 7}
	s := &server{Options: Options{LogACLs: acls, Table: containers.NewTable(containers.NewJournal(nil))}}
	s.Table.RestoreApp(&containers.App{ID: app, User: "alice",
		ACLs: []*yarnpb.ApplicationACLMapProto{{AccessType: yarnpb.ApplicationAccessTypeProto_APPACCESS_VIEW_APP.Enum(), Acl: proto.String("carol")}}})
	ask := func(query string, id records.ApplicationID) string {
		return s.mayViewLogs(httptest.NewRequest("GET", "/node/containerlogs/x/alice"+query, nil), id)
	}
	for _, q := range []string{"", "?user.name=alice", "?user.name=carol", "?user.name=root"} {
		if why := ask(q, app); why != "" {
			t.Errorf("%q refused: %s", q, why)
		}
	}
	if why := ask("?user.name=bob", app); !strings.Contains(why, "User [bob] is not authorized to view the logs for application application_1_0007") {
		t.Errorf("bob: %q", why)
	}
	if why := ask("?user.name=bob", records.ApplicationID{ClusterTimestamp: 1, ID: 8}); why == "" {
		t.Error("bob read the logs of an application the node does not know")
	}
	s.LogACLs.enabled = false
	if why := ask("?user.name=bob", app); why != "" {
		t.Errorf("without ACLs: %s", why)
	}
}
