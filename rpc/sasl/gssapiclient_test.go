package sasl

import (
	"bytes"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/types"

	"github.com/bobbin-yarn/bobbin/internal/kdctest"
)

// The initiator against the acceptor, both Bobbin's, with tickets from a real MIT KDC:
// each protection both sides allow is chosen at its strongest; a client that allows only
// what the server does not offer gives up with Java's text; the AP-REP of another
// exchange is refused.
func TestGSSAPIClientWithMITKDC(t *testing.T) {
	k := kdctest.Start(t, "BOBBIN.TEST")
	rmKT, err := keytab.Load(k.Keytab(t, "rm.keytab", "rm/localhost"))
	if err != nil {
		t.Fatal(err)
	}
	nmKT, err := keytab.Load(k.Keytab(t, "nm.keytab", "nm/localhost"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(k.Krb5Conf())
	if err != nil {
		t.Fatal(err)
	}
	cl := client.NewWithKeytab("nm/localhost", k.Realm, nmKT, cfg, client.DisablePAFXFAST(true))
	if err := cl.Login(); err != nil {
		t.Fatal(err)
	}
	defer cl.Destroy()
	src := Tickets(cl)

	for _, tc := range []struct{ offer, allow, want byte }{
		{QOPAuth, QOPAuth, QOPAuth},
		{QOPAuth | QOPIntegrity, QOPAuth | QOPIntegrity, QOPIntegrity},
		{QOPAuth | QOPIntegrity, QOPAuth, QOPAuth},
		{QOPAuth | QOPIntegrity | QOPPrivacy, QOPAuth | QOPIntegrity | QOPPrivacy, QOPPrivacy},
		{QOPPrivacy, QOPPrivacy, QOPPrivacy},
	} {
		s := NewGSSAPIServer(rmKT, "rm/localhost", tc.offer, 0)
		c := NewGSSAPIClient(tc.allow)
		tok, err := c.Start(src, "rm/localhost")
		if err != nil {
			t.Fatal(err)
		}
		var done bool
		for i := 0; !done; i++ {
			if i > 3 {
				t.Fatal("exchange does not end")
			}
			var ch []byte
			if ch, done, err = s.Step(tok); err != nil {
				t.Fatalf("offer %#x allow %#x: server: %v", tc.offer, tc.allow, err)
			}
			if done {
				break
			}
			if tok, err = c.Step(ch); err != nil {
				t.Fatalf("offer %#x allow %#x: client: %v", tc.offer, tc.allow, err)
			}
		}
		if !c.Done() || c.QOP() != tc.want || s.QOP() != tc.want || s.Client() != "nm/localhost@BOBBIN.TEST" {
			t.Fatalf("offer %#x allow %#x: client done %v qop %d, server qop %d client %q", tc.offer, tc.allow, c.Done(), c.QOP(), s.QOP(), s.Client())
		}
		// Wrapped messages flow both ways after the exchange, in sequence.
		w, _ := c.Wrap([]byte("ping"))
		if p, err := s.Unwrap(w); err != nil || string(p) != "ping" {
			t.Fatalf("client to server: %q %v", p, err)
		}
		w, _ = s.Wrap([]byte("pong"))
		if p, err := c.Unwrap(w); err != nil || string(p) != "pong" {
			t.Fatalf("server to client: %q %v", p, err)
		}
		if _, err := c.Unwrap(w); err == nil {
			t.Fatal("a replayed wrap token was accepted")
		}
		if tc.want == QOPPrivacy {
			w, _ := c.Wrap([]byte("secret payload"))
			if bytes.Contains(w, []byte("secret payload")) || w[2]&flagSealed == 0 {
				t.Fatalf("privacy token not sealed: % x", w)
			}
			w[len(w)-1] ^= 1
			if _, err := s.Unwrap(w); err == nil {
				t.Fatal("a tampered sealed token was accepted")
			}
		}
	}

	// Privacy only on the client, authentication only on the server.
	s := NewGSSAPIServer(rmKT, "rm/localhost", QOPAuth, 0)
	c := NewGSSAPIClient(QOPPrivacy)
	tok, _ := c.Start(src, "rm/localhost")
	ch, _, _ := s.Step(tok)
	tok, _ = c.Step(ch)
	ch, _, _ = s.Step(tok)
	if _, err := c.Step(ch); err == nil {
		t.Fatal("no common protection, yet the client answered")
	}

	// An AP-REP from another exchange does not answer this one.
	other := NewGSSAPIClient(QOPAuth)
	otherTok, _ := other.Start(src, "rm/localhost")
	otherRep, _, err := NewGSSAPIServer(rmKT, "rm/localhost", QOPAuth, 0).Step(otherTok)
	if err != nil {
		t.Fatal(err)
	}
	c = NewGSSAPIClient(QOPAuth)
	c.Start(src, "rm/localhost")
	time.Sleep(time.Millisecond)
	if _, err := c.Step(otherRep); err == nil {
		t.Fatal("another exchange's AP-REP was accepted")
	}
}

// fixedTicket is a TicketSource with a made-up ticket, for fuzzing the client's steps.
type fixedTicket struct{}

func (fixedTicket) GetServiceTicket(string) (messages.Ticket, types.EncryptionKey, error) {
	return messages.Ticket{TktVNO: 5, Realm: "BOBBIN.TEST", SName: types.NewPrincipalName(2, "rm/localhost"),
			EncPart: types.EncryptedData{EType: 18, Cipher: []byte{1, 2, 3}}},
		types.EncryptionKey{KeyType: 18, KeyValue: make([]byte, 32)}, nil
}
func (fixedTicket) CName() types.PrincipalName { return types.NewPrincipalName(1, "nm") }
func (fixedTicket) Realm() string              { return "BOBBIN.TEST" }

// FuzzGSSAPIClient feeds arbitrary server challenges to the initiator: none is taken for
// an AP-REP or an offer, none panics.
func FuzzGSSAPIClient(f *testing.F) {
	f.Add([]byte{}, []byte{})
	f.Add([]byte{0x60, 0x80, 0x06}, []byte{0x05, 0x04, 0x01, 0xff, 0, 12, 0, 0})
	f.Fuzz(func(t *testing.T, first, second []byte) {
		c := NewGSSAPIClient(QOPAuth)
		if _, err := c.Start(fixedTicket{}, "rm/localhost"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Step(first); err == nil {
			t.Fatal("garbage AP-REP accepted")
		}
		if _, err := c.Step(second); err == nil || c.Done() {
			t.Fatal("a failed exchange went on")
		}
	})
}

// FuzzUnseal: arbitrary sealed wrap tokens are refused, never panic (their decryption
// reads lengths from the token).
func FuzzUnseal(f *testing.F) {
	key := types.EncryptionKey{KeyType: 18, KeyValue: make([]byte, 32)}
	good, _ := seal(key, 0, 7, []byte("payload"), usageInitiatorSeal)
	f.Add(good)
	f.Add([]byte{0x05, 0x04, 0x02, 0xff, 0, 0, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, tok []byte) {
		p, _, err := unseal(key, tok, false, usageInitiatorSeal)
		if err == nil && string(p) != "payload" {
			t.Fatalf("forged token accepted: %q", p)
		}
	})
}
