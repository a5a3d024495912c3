package resourcemanager

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/client/rmclient"
	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/resourcemanager/statestore"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/token"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
)

// RM delegation tokens on an RM without Kerberos, as the Java RM serves them there: a
// SIMPLE caller gets one; a client holding it authenticates with TOKEN (DIGEST-MD5) as
// the owner; only the renewer renews it, only owner or renewer cancel it, with Java's
// texts; a cancelled token no longer opens a connection; with recovery on, a restarted
// RM still takes a token it issued before.
func TestDelegationTokens(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	c := testConf(statestore.KeyRecovery, "true", statestore.KeyFSURI, "file://"+dir)
	c.Set("yarn.resourcemanager.address", freeAddr(t))
	rm1 := startRestartableRM(t, c)
	alice := rmclient.New(rm1.ClientAddr().String(), "alice", rpc.ClientOptions{ConnectRetries: -1, Logger: testutil.QuietLogger()})
	defer alice.Close()
	var got commonpb.GetDelegationTokenResponseProto
	if err := alice.Call(ctx, "getDelegationToken", &commonpb.GetDelegationTokenRequestProto{Renewer: strPtr("yarn")}, &got); err != nil {
		t.Fatal(err)
	}
	tok := got.GetToken()
	if tok.GetKind() != "RM_DELEGATION_TOKEN" || len(tok.GetPassword()) != 20 {
		t.Fatalf("token %v", tok)
	}
	withToken := func(addr string, tok *commonpb.TokenProto) *rmclient.Client {
		return rmclient.New(addr, "mallory", rpc.ClientOptions{ConnectRetries: -1, Token: token.FromProto(tok), Logger: testutil.QuietLogger()})
	}
	holder := withToken(rm1.ClientAddr().String(), tok)
	defer holder.Close()
	if _, err := holder.GetClusterMetrics(ctx); err != nil {
		t.Fatalf("call with the delegation token: %v", err)
	}
	var newApp yarnpb.GetNewApplicationResponseProto
	if err := holder.Call(ctx, "getNewApplication", &yarnpb.GetNewApplicationRequestProto{}, &newApp); err != nil {
		t.Fatal(err)
	}
	renew := func(cl *rmclient.Client, tok *commonpb.TokenProto) (uint64, error) {
		var r commonpb.RenewDelegationTokenResponseProto
		err := cl.Call(ctx, "renewDelegationToken", &commonpb.RenewDelegationTokenRequestProto{Token: tok}, &r)
		return r.GetNewExpiryTime(), err
	}
	if _, err := renew(alice, tok); err == nil || remote(t, err).Class != exceptions.YarnException ||
		remote(t, err).Message != "org.apache.hadoop.security.AccessControlException: alice tries to renew a token with renewer yarn" {
		t.Fatalf("renew by the owner, not the renewer: %v", err)
	}
	yarnUser := rmclient.New(rm1.ClientAddr().String(), "yarn", rpc.ClientOptions{ConnectRetries: -1, Logger: testutil.QuietLogger()})
	defer yarnUser.Close()
	if exp, err := renew(yarnUser, tok); err != nil || time.Until(time.UnixMilli(int64(exp))) < 23*time.Hour {
		t.Fatalf("renew by the renewer: %d %v", exp, err)
	}
	stopRM(t, rm1)

	rm2 := startRestartableRM(t, c)
	defer stopRM(t, rm2)
	after := withToken(rm2.ClientAddr().String(), tok)
	defer after.Close()
	if _, err := after.GetClusterMetrics(ctx); err != nil {
		t.Fatalf("the token after a restart: %v", err)
	}
	bob := rmclient.New(rm2.ClientAddr().String(), "bob", rpc.ClientOptions{ConnectRetries: -1, Logger: testutil.QuietLogger()})
	defer bob.Close()
	cancelTok := func(cl *rmclient.Client) error {
		return cl.Call(ctx, "cancelDelegationToken", &commonpb.CancelDelegationTokenRequestProto{Token: tok}, &commonpb.CancelDelegationTokenResponseProto{})
	}
	if err := cancelTok(bob); err == nil || remote(t, err).Message != "org.apache.hadoop.security.AccessControlException: bob is not authorized to cancel the token" {
		t.Fatalf("cancel by a stranger: %v", err)
	}
	alice2 := rmclient.New(rm2.ClientAddr().String(), "alice", rpc.ClientOptions{ConnectRetries: -1, Logger: testutil.QuietLogger()})
	defer alice2.Close()
	if err := cancelTok(alice2); err != nil {
		t.Fatalf("cancel by the owner: %v", err)
	}
	late := withToken(rm2.ClientAddr().String(), tok)
	defer late.Close()
	if _, err := late.GetClusterMetrics(ctx); err == nil || !strings.Contains(err.Error(), "can't be found in cache") {
		t.Fatalf("a cancelled token: %v", err)
	}
	if err := cancelTok(alice2); err == nil || remote(t, err).Message != "org.apache.hadoop.security.token.SecretManager$InvalidToken: Token not found" {
		t.Fatalf("cancel twice: %v", err)
	}
}

func strPtr(s string) *string { return &s }
