package delegation

import (
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/rpc"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func short(p string) (string, error) {
	return strings.SplitN(strings.SplitN(p, "@", 2)[0], "/", 2)[0], nil
}

func remoteClass(err error) string {
	var re *rpc.RemoteError
	if errors.As(err, &re) {
		return re.Class + ": " + re.Message
	}
	return ""
}

// memStore is a Persister that keeps what it is told, as a state store would.
type memStore struct {
	keys   map[int32]Key
	tokens map[int32]Stored
}

func (s *memStore) StoreKey(k Key) error        { s.keys[k.ID] = k; return nil }
func (s *memStore) RemoveKey(id int32) error    { delete(s.keys, id); return nil }
func (s *memStore) StoreToken(t Stored) error   { s.tokens[t.ID.GetSequenceNumber()] = t; return nil }
func (s *memStore) RemoveToken(seq int32) error { delete(s.tokens, seq); return nil }

func (s *memStore) state() State {
	var st State
	for _, k := range s.keys {
		st.Keys = append(st.Keys, k)
	}
	for _, t := range s.tokens {
		st.Tokens = append(st.Tokens, t)
		if t.ID.GetSequenceNumber() > st.Seq {
			st.Seq = t.ID.GetSequenceNumber()
		}
	}
	return st
}

// The life of a token as Java's secret manager leads it: issued with the renewer's short
// name, verified for DIGEST-MD5 with the owner's short name as user, renewed only by its
// renewer and never past its max date, expired when not renewed, cancelled by its owner
// or renewer only; every refusal in Java's words. A restarted manager restored from the
// store still verifies and renews the tokens.
func TestTokenLifecycle(t *testing.T) {
	c := &clock{t: time.UnixMilli(1_700_000_000_000)}
	store := &memStore{keys: map[int32]Key{}, tokens: map[int32]Stored{}}
	s := Settings{KeyUpdate: time.Hour, RenewInterval: 10 * time.Minute, MaxLifetime: 30 * time.Minute}
	m, err := New(s, c.now, short, store)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := m.Issue("alice@BOBBIN.TEST", "yarn/rm.example.com@BOBBIN.TEST", "")
	if err != nil || tok.GetKind() != Kind {
		t.Fatalf("issue: %v %v", tok, err)
	}
	var id yarnpb.YARNDelegationTokenIdentifierProto
	proto.Unmarshal(tok.GetIdentifier(), &id)
	if id.GetOwner() != "alice@BOBBIN.TEST" || id.GetRenewer() != "yarn" || id.GetSequenceNumber() != 1 || id.GetMaxDate()-id.GetIssueDate() != 30*60*1000 {
		t.Fatalf("identifier %v", &id)
	}
	pw, user, err := m.RetrievePassword(tok.GetIdentifier())
	if err != nil || user != "alice" || string(pw) != string(tok.GetPassword()) {
		t.Fatalf("retrieve: %q %v", user, err)
	}
	if _, err := m.Renew(tok, "bob"); remoteClass(err) != ClassAccessControl+": bob tries to renew a token with renewer yarn" {
		t.Fatalf("renew by another: %v", err)
	}
	forged := proto.Clone(tok).(*commonpb.TokenProto)
	forged.Password = []byte("nope")
	if _, err := m.Renew(forged, "yarn"); remoteClass(err) != ClassInvalidToken+": yarn is trying to renew a token with wrong password" {
		t.Fatalf("renew with a wrong password: %v", err)
	}
	// Renewals move the expiry on, up to the max date.
	c.t = c.t.Add(8 * time.Minute)
	exp, err := m.Renew(tok, "yarn")
	if err != nil || !exp.Equal(c.t.Add(10*time.Minute)) {
		t.Fatalf("renew: %v %v", exp, err)
	}
	c.t = c.t.Add(9 * time.Minute)
	if _, _, err := m.RetrievePassword(tok.GetIdentifier()); err != nil {
		t.Fatalf("renewed token refused: %v", err)
	}
	c.t = c.t.Add(9 * time.Minute) // 26 min after issue: the next renewal stops at 30
	if exp, err = m.Renew(tok, "yarn"); err != nil || exp.UnixMilli() != id.GetMaxDate() {
		t.Fatalf("renew near the max date: %v %v", exp, err)
	}

	// A restart: a new manager from what the store kept.
	m2, err := New(s, c.now, short, store)
	if err != nil {
		t.Fatal(err)
	}
	if err := m2.Restore(store.state()); err != nil {
		t.Fatal(err)
	}
	if _, user, err := m2.RetrievePassword(tok.GetIdentifier()); err != nil || user != "alice" {
		t.Fatalf("after restore: %q %v", user, err)
	}
	tok2, _ := m2.Issue("bob", "", "")
	var id2 yarnpb.YARNDelegationTokenIdentifierProto
	proto.Unmarshal(tok2.GetIdentifier(), &id2)
	if id2.GetSequenceNumber() != 2 {
		t.Fatalf("sequence after restore: %d", id2.GetSequenceNumber())
	}
	if _, err := m2.Renew(tok2, "bob"); remoteClass(err) != ClassAccessControl+": bob tried to renew a token without a renewer" {
		t.Fatalf("renew without renewer: %v", err)
	}
	if err := m2.Cancel(tok2, "carol"); remoteClass(err) != ClassAccessControl+": carol is not authorized to cancel the token" {
		t.Fatalf("cancel by another: %v", err)
	}
	if err := m2.Cancel(tok2, "bob"); err != nil {
		t.Fatalf("cancel by the owner: %v", err)
	}
	if _, _, err := m2.RetrievePassword(tok2.GetIdentifier()); !strings.Contains(remoteClass(err), "can't be found in cache") {
		t.Fatalf("cancelled token: %v", err)
	}
	if err := m2.Cancel(tok2, "bob"); remoteClass(err) != ClassInvalidToken+": Token not found" {
		t.Fatalf("second cancel: %v", err)
	}
	if _, ok := store.tokens[2]; ok {
		t.Fatal("the store kept a cancelled token")
	}

	// Past the max date: expired, removed by Tick, gone from the store.
	c.t = c.t.Add(5 * time.Minute)
	if _, _, err := m2.RetrievePassword(tok.GetIdentifier()); !strings.Contains(remoteClass(err), "is expired") {
		t.Fatalf("expired token: %v", err)
	}
	if _, err := m2.Renew(tok, "yarn"); remoteClass(err) != ClassInvalidToken+": yarn tried to renew an expired token" {
		t.Fatalf("renew expired: %v", err)
	}
	if err := m2.Tick(); err != nil {
		t.Fatal(err)
	}
	if len(store.tokens) != 0 {
		t.Fatalf("store after tick: %v", store.tokens)
	}
	// Keys roll with the update interval; old ones go once no token can need them.
	keysBefore := len(store.keys)
	c.t = c.t.Add(time.Hour)
	m2.Tick()
	if len(store.keys) != keysBefore+1 {
		t.Fatalf("keys after roll: %d, before %d", len(store.keys), keysBefore)
	}
	c.t = c.t.Add(3 * time.Hour)
	m2.Tick()
	if len(store.keys) != 1 {
		t.Fatalf("keys after expiry: %d", len(store.keys))
	}
	if _, _, err := m2.RetrievePassword([]byte{0xff, 0xff}); !strings.Contains(remoteClass(err), "malformed") {
		t.Fatalf("garbage identifier: %v", err)
	}
}

// FuzzRetrievePassword: arbitrary identifiers from the network are refused, never panic.
func FuzzRetrievePassword(f *testing.F) {
	m, _ := New(DefaultSettings, time.Now, nil, nil)
	tok, _ := m.Issue("alice", "yarn", "")
	f.Add(tok.GetIdentifier())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		pw, _, err := m.RetrievePassword(b)
		if err == nil && string(b) != string(tok.GetIdentifier()) {
			var a, c yarnpb.YARNDelegationTokenIdentifierProto
			proto.Unmarshal(b, &a)
			proto.Unmarshal(tok.GetIdentifier(), &c)
			if !proto.Equal(&a, &c) {
				t.Fatalf("accepted %x", b)
			}
		}
		_ = pw
	})
}
