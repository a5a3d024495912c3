package security

import (
	"bytes"
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/token"
)

var att = records.AttemptID{App: records.ApplicationID{ClusterTimestamp: 1732269000000, ID: 1}, Attempt: 1}

// serve runs a token-only IPC server whose one method reports the caller.
func serve(t *testing.T, sm rpc.SecretManager) string {
	s := rpc.NewServer(rpc.ServerOptions{SecretManager: sm, TokenRequired: true, Logger: testutil.QuietLogger()})
	s.Register(&rpc.Protocol{Name: "test.WhoAmI", Version: 1, Methods: map[string]rpc.Method{
		"who": rpc.Unary(func(ctx context.Context, _ *yarnpb.GetQueueInfoRequestProto) (*yarnpb.GetQueueInfoResponseProto, error) {
			c, _ := rpc.CallerFrom(ctx)
			return &yarnpb.GetQueueInfoResponseProto{QueueInfo: &yarnpb.QueueInfoProto{QueueName: proto.String(c.User)}}, nil
		}),
	}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	return ln.Addr().String()
}

func who(t *testing.T, addr string, tok *token.Token) (string, error) {
	c := rpc.NewClient(rpc.ClientOptions{Addr: addr, Protocol: "test.WhoAmI", Token: tok, ConnectRetries: -1, Logger: testutil.QuietLogger()})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var resp yarnpb.GetQueueInfoResponseProto
	err := c.Call(ctx, "who", &yarnpb.GetQueueInfoRequestProto{}, &resp)
	return resp.GetQueueInfo().GetQueueName(), err
}

func TestAMRMTokenLogin(t *testing.T) {
	m := NewAMRMTokens(NewKeyRing(1))
	addr := serve(t, m)
	tok, err := m.Issue(att)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Kind != "YARN_AM_RM_TOKEN" || tok.Service != "" {
		t.Fatalf("token %v", tok)
	}
	if got, err := AttemptOf(tok.Identifier); err != nil || got != att {
		t.Fatalf("AttemptOf = %v %v", got, err)
	}
	if user, err := who(t, addr, tok); err != nil || user != "appattempt_1732269000000_0001_000001" {
		t.Fatalf("login as %q: %v", user, err)
	}
	// A forged password and a revoked attempt are refused with the classes Java expects.
	forged := *tok
	forged.Password = bytes.Repeat([]byte{1}, 20)
	var re *rpc.RemoteError
	if _, err := who(t, addr, &forged); !errors.As(err, &re) || re.Class != rpc.ClassSaslException {
		t.Fatalf("forged: %v", err)
	}
	m.Revoke(att)
	if _, err := who(t, addr, tok); !errors.As(err, &re) || re.Class != rpc.ClassInvalidToken {
		t.Fatalf("revoked: %v", err)
	}
}

// Tokens signed with the previous key keep working across one roll, not two.
func TestKeyRolling(t *testing.T) {
	m := NewAMRMTokens(NewKeyRing(10))
	addr := serve(t, m)
	old, _ := m.Issue(att)
	m.Keys.Roll()
	if _, ok := m.Keys.Next(); !ok {
		t.Fatal("no next key during a roll")
	}
	m.Keys.Activate()
	if m.Keys.Current().ID != 11 {
		t.Fatalf("current key %d, want 11", m.Keys.Current().ID)
	}
	fresh, _ := m.Issue(att)
	for name, tok := range map[string]*token.Token{"old": old, "fresh": fresh} {
		if _, err := who(t, addr, tok); err != nil {
			t.Errorf("%s token after one roll: %v", name, err)
		}
	}
	m.Keys.Roll()
	m.Keys.Activate()
	if _, err := who(t, addr, old); err == nil {
		t.Error("a token two keys old still authenticates")
	}
}

func TestNMTokensVerifiedByTheNM(t *testing.T) {
	keys := NewKeyRing(100)
	issuer := NMTokens{Keys: keys}
	node := &yarnpb.NodeIdProto{Host: proto.String("127.0.0.1"), Port: proto.Int32(45454)}
	tok, err := issuer.Issue(att, node, "alice")
	if err != nil || tok.Service != "127.0.0.1:45454" || tok.Kind != "NMToken" {
		t.Fatalf("%v %v", tok, err)
	}
	v := &NMVerifier{}
	v.SetKeys(keys.Current())
	addr := serve(t, v)
	if user, err := who(t, addr, tok); err != nil || user != att.String() {
		t.Fatalf("NM login: %q %v", user, err)
	}
	v.SetKeys(MasterKey{ID: 999, Bytes: []byte("other")})
	if _, err := who(t, addr, tok); err == nil {
		t.Fatal("NMToken accepted without its key")
	}
}

func TestContainerTokenPassword(t *testing.T) {
	keys := NewKeyRing(5)
	m := ContainerTokens{Keys: keys, RMIdentifier: 1732269000000}
	cid := records.ContainerID{Attempt: att, ID: 1}
	tok, err := m.Issue(&yarnpb.ContainerTokenIdentifierProto{ContainerId: cid.Proto(), NmHostAddr: proto.String("127.0.0.1:45454"), AppSubmitter: proto.String("alice")})
	if err != nil {
		t.Fatal(err)
	}
	var id yarnpb.ContainerTokenIdentifierProto
	if err := proto.Unmarshal(tok.Identifier, &id); err != nil || id.GetMasterKeyId() != 5 || id.GetRmIdentifier() != 1732269000000 {
		t.Fatalf("identifier %v %v", &id, err)
	}
	// An NM holding the same master key recomputes the password.
	if pw, ok := keys.Password(5, tok.Identifier); !ok || !bytes.Equal(pw, tok.Password) {
		t.Fatal("password does not verify")
	}
}

// A NodeManager's keys: current and previous of each kind verify, older ones do not, and
// the last known keys are the newest.
func TestNodeKeysKeepCurrentAndPrevious(t *testing.T) {
	k := NewNodeKeys()
	if c, n := k.LastKnown(); c != nil || n != nil {
		t.Fatalf("keys before the first update: %v %v", c, n)
	}
	mk := func(id int32) *yarnpb.MasterKeyProto {
		return &yarnpb.MasterKeyProto{KeyId: proto.Int32(id), Bytes: []byte{byte(id), 1, 2, 3}}
	}
	k.Update(mk(1), mk(11))
	k.Update(mk(2), nil)
	k.Update(mk(2), mk(12)) // the same container key again changes nothing
	k.Update(mk(3), mk(13))
	for id, want := range map[int32]bool{1: false, 2: true, 3: true} {
		if b, ok := k.ContainerKey(id); ok != want || (ok && b[0] != byte(id)) {
			t.Errorf("container key %d held %v, want %v", id, ok, want)
		}
	}
	if c, n := k.LastKnown(); c.GetKeyId() != 3 || n.GetKeyId() != 13 {
		t.Fatalf("last known %v %v", c, n)
	}
	att := records.AttemptID{App: records.ApplicationID{ClusterTimestamp: 1, ID: 1}, Attempt: 1}
	for id, want := range map[int32]bool{11: false, 12: true, 13: true} {
		ident, _ := proto.Marshal(&yarnpb.NMTokenIdentifierProto{AppAttemptId: att.Proto(), KeyId: proto.Int32(id)})
		_, _, err := k.NMTokens().RetrievePassword(ident)
		if (err == nil) != want {
			t.Errorf("NMToken of key %d: %v, want verified %v", id, err, want)
		}
	}
}

// A ring restored from its state verifies what the original signed — with its current,
// next and previous keys — and goes on rolling from the last id.
func TestKeyRingStateRoundTrip(t *testing.T) {
	k := NewKeyRing(40)
	k.Roll()
	k.Activate() // 41 current, 40 previous
	k.Roll()     // 42 next
	signedOld, oldID := []byte("old"), int32(40)
	pwOld, _ := k.Password(oldID, signedOld)
	pwCur, curID := k.Sign([]byte("current"))
	next, _ := k.Next()
	r, err := RestoreKeyRing(k.State())
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := r.Password(oldID, signedOld); !ok || string(got) != string(pwOld) {
		t.Fatal("previous key lost")
	}
	if got, ok := r.Password(curID, []byte("current")); !ok || string(got) != string(pwCur) {
		t.Fatal("current key lost")
	}
	if n, ok := r.Next(); !ok || n.ID != next.ID || string(n.Password([]byte("x"))) != string(next.Password([]byte("x"))) {
		t.Fatal("next key lost")
	}
	if id := r.Roll().ID; id != 43 {
		t.Fatalf("roll after a restore made key %d, want 43", id)
	}
	if _, err := RestoreKeyRing(RingState{}); err == nil {
		t.Fatal("a ring without a current key was restored")
	}
}

// A roll whose state the store refuses leaves no next key; one it keeps installs the key
// it stored.
func TestRollSavedInstallsOnlyWhatWasStored(t *testing.T) {
	k := NewKeyRing(5)
	if _, err := k.RollSaved(func(RingState) error { return errors.New("disk full") }); err == nil {
		t.Fatal("a refused roll succeeded")
	}
	if _, ok := k.Next(); ok {
		t.Fatal("a refused roll left a next key")
	}
	var stored RingState
	n, err := k.RollSaved(func(st RingState) error { stored = st; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if next, ok := k.Next(); !ok || next.ID != n.ID || stored.Next == nil || stored.Next.ID != n.ID || string(stored.Next.Bytes) != string(next.Bytes) {
		t.Fatalf("installed %v, stored %+v", n.ID, stored.Next)
	}
}
