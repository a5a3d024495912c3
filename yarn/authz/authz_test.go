package authz

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/conf"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/protocol"
)

// fixedGroups maps users to groups without the system's user database.
func fixedGroups(m map[string][]string) *Groups {
	g := NewGroups(time.Hour, nil)
	g.lookup = func(u string) []string { return m[u] }
	return g
}

// serve starts an IPC server on loopback whose connections pass p, answering
// getQueueInfo on the client protocol with the caller's user.
func serve(t *testing.T, p *Policy) string {
	t.Helper()
	s := rpc.NewServer(rpc.ServerOptions{Logger: testutil.QuietLogger(), Authorize: p.Authorize})
	s.Register(&rpc.Protocol{Name: protocol.ApplicationClient, Version: 1, Methods: map[string]rpc.Method{
		"getQueueInfo": rpc.Unary(func(ctx context.Context, _ *yarnpb.GetQueueInfoRequestProto) (*yarnpb.GetQueueInfoResponseProto, error) {
			c, _ := rpc.CallerFrom(ctx)
			return &yarnpb.GetQueueInfoResponseProto{QueueInfo: &yarnpb.QueueInfoProto{QueueName: proto.String(c.User)}}, nil
		}),
	}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	return ln.Addr().String()
}

// call makes one call as user (acting through real when set): the user the server saw, or
// the refusal.
func call(t *testing.T, addr, user, real string) (string, error) {
	t.Helper()
	c := rpc.NewClient(rpc.ClientOptions{Addr: addr, Protocol: protocol.ApplicationClient, User: user, RealUser: real, ConnectRetries: -1, Logger: testutil.QuietLogger()})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var resp yarnpb.GetQueueInfoResponseProto
	err := c.Call(ctx, "getQueueInfo", &yarnpb.GetQueueInfoRequestProto{}, &resp)
	return resp.GetQueueInfo().GetQueueName(), err
}

func refusedWith(t *testing.T, err error, class, msg string) {
	t.Helper()
	var re *rpc.RemoteError
	if !errors.As(err, &re) || re.Class != class || !strings.Contains(re.Message, msg) {
		t.Fatalf("got %v, want %s: %s", err, class, msg)
	}
}

func TestServiceACLs(t *testing.T) {
	dir := t.TempDir()
	writePolicy := func(acl, blocked string) {
		body := `<configuration>
<property><name>security.applicationclient.protocol.acl</name><value>` + acl + `</value></property>
<property><name>security.applicationclient.protocol.acl.blocked</name><value>` + blocked + `</value></property>
</configuration>`
		if err := os.WriteFile(filepath.Join(dir, PolicyFile), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writePolicy("alice ops", "")
	c := conf.New()
	c.Set("hadoop.security.authorization", "true")
	p, err := NewPolicy(c, dir, RMServices, fixedGroups(map[string][]string{"carol": {"ops"}, "dave": {"ops"}}))
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, p)
	for _, u := range []string{"alice", "carol"} {
		if got, err := call(t, addr, u, ""); err != nil || got != u {
			t.Fatalf("%s (allowed by user or group): %q %v", u, got, err)
		}
	}
	_, err = call(t, addr, "bob", "")
	refusedWith(t, err, ClassAuthorization, "User bob (auth:SIMPLE) is not authorized for protocol interface org.apache.hadoop.yarn.api.ApplicationClientProtocolPB, expected client Kerberos principal is null")

	// A blocked entry wins over the allowed list; Reload of the service ACLs alone takes a
	// new file.
	writePolicy("*", "dave")
	if err := p.ReloadServiceACLs(c); err != nil {
		t.Fatal(err)
	}
	if _, err := call(t, addr, "bob", ""); err != nil {
		t.Fatalf("bob after the ACL became *: %v", err)
	}
	_, err = call(t, addr, "dave", "")
	refusedWith(t, err, ClassAuthorization, "User dave (auth:SIMPLE) is not authorized")

	// A protocol outside the daemon's list is refused by name.
	if err := p.Authorize(&rpc.Caller{User: "alice", Auth: rpc.AuthSimple, Protocol: "org.example.Unknown"}); err == nil ||
		!strings.Contains(err.Error(), "Protocol interface org.example.Unknown is not known.") {
		t.Fatalf("unknown protocol: %v", err)
	}
	// Hosts: loopback is refused once the protocol's hosts leave it out.
	c.Set("security.applicationclient.protocol.hosts", "10.0.0.0/8")
	if err := p.ReloadServiceACLs(c); err != nil {
		t.Fatal(err)
	}
	_, err = call(t, addr, "bob", "")
	refusedWith(t, err, ClassAuthorization, "Host 127.0.0.1 is not authorized for protocol interface org.apache.hadoop.yarn.api.ApplicationClientProtocolPB")

	// Off, nothing is checked, and refreshing the ACLs is refused as Java refuses it.
	off, err := NewPolicy(conf.New(), dir, RMServices, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := off.Authorize(&rpc.Caller{User: "dave", Auth: rpc.AuthSimple, Protocol: protocol.ApplicationClient}); err != nil {
		t.Fatalf("authorization off: %v", err)
	}
	if err := off.ReloadServiceACLs(conf.New()); err == nil || !strings.Contains(err.Error(), "Service Authorization (hadoop.security.authorization) not enabled.") {
		t.Fatalf("refresh with authorization off: %v", err)
	}
}

func TestProxyUsers(t *testing.T) {
	c := conf.New()
	c.Set("hadoop.proxyuser.oozie.groups", "staff")
	c.Set("hadoop.proxyuser.oozie.hosts", "127.0.0.1")
	c.Set("hadoop.proxyuser.hue.users", "alice")
	c.Set("hadoop.proxyuser.hue.hosts", "10.1.2.3")
	p, err := NewPolicy(c, "", RMServices, fixedGroups(map[string][]string{"alice": {"staff"}}))
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, p)
	if got, err := call(t, addr, "alice", "oozie"); err != nil || got != "alice" {
		t.Fatalf("oozie acting for alice (group staff, from an allowed host): %q %v", got, err)
	}
	_, err = call(t, addr, "bob", "oozie")
	refusedWith(t, err, ClassAuthorization, "User: oozie is not allowed to impersonate bob")
	_, err = call(t, addr, "alice", "hue")
	refusedWith(t, err, ClassAuthorization, "Unauthorized connection for super-user: hue from IP 127.0.0.1")
	_, err = call(t, addr, "alice", "mallory")
	refusedWith(t, err, ClassAuthorization, "User: mallory is not allowed to impersonate alice")

	// A refresh takes new super-user settings; the plain caller was never affected.
	c.Set("hadoop.proxyuser.hue.hosts", "*")
	if err := p.ReloadProxyUsers(c); err != nil {
		t.Fatal(err)
	}
	if _, err := call(t, addr, "alice", "hue"); err != nil {
		t.Fatalf("hue after its hosts became *: %v", err)
	}
	if got, err := call(t, addr, "bob", ""); err != nil || got != "bob" {
		t.Fatalf("plain caller: %q %v", got, err)
	}
}

func TestGroupsCacheAndRefresh(t *testing.T) {
	now := time.Unix(1000, 0)
	g := NewGroups(time.Minute, func() time.Time { return now })
	answer := []string{"a"}
	lookups := 0
	g.lookup = func(string) []string { lookups++; return answer }
	g.Of("u")
	answer = []string{"b"}
	if got := g.Of("u"); got[0] != "a" || lookups != 1 {
		t.Fatalf("cached answer: %v after %d lookups", got, lookups)
	}
	g.Refresh()
	if got := g.Of("u"); got[0] != "b" {
		t.Fatalf("after Refresh: %v", got)
	}
	answer = []string{"c"}
	now = now.Add(2 * time.Minute)
	if got := g.Of("u"); got[0] != "c" {
		t.Fatalf("after the cache time: %v", got)
	}
}

func TestMachineList(t *testing.T) {
	m := ParseMachineList(" 10.0.0.0/8, 192.168.1.7 ,localhost")
	for ip, want := range map[string]bool{"10.9.8.7": true, "192.168.1.7": true, "192.168.1.8": false, "127.0.0.1": true} {
		if got := m.Includes(net.ParseIP(ip)); got != want {
			t.Errorf("%s: %v, want %v", ip, got, want)
		}
	}
	if ParseMachineList("").Includes(net.ParseIP("127.0.0.1")) || !ParseMachineList("*").Includes(nil) {
		t.Fatal("empty list includes an address, or * does not include an unknown one")
	}
}
