package sasl

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/jcmturner/gofork/encoding/asn1"
	"github.com/jcmturner/gokrb5/v8/asn1tools"
	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/chksumtype"
	"github.com/jcmturner/gokrb5/v8/iana/flags"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"

	"github.com/bobbin-yarn/bobbin/internal/kdctest"
)

// initiator plays the JDK's GSSAPI SASL client for the test: an AP-REQ with the GSS
// checksum (Hadoop's flags 0x3E: mutual, replay, sequence, conf, integ) and a subkey.
type initiator struct {
	auth    types.Authenticator
	session types.EncryptionKey
	token   []byte
	sendSeq uint64
	recvSeq uint64
}

func newInitiator(t *testing.T, cl *client.Client, service string, mutual bool) *initiator {
	t.Helper()
	tkt, session, err := cl.GetServiceTicket(service)
	if err != nil {
		t.Fatalf("service ticket for %s: %v", service, err)
	}
	auth, err := types.NewAuthenticator(cl.Credentials.Domain(), cl.Credentials.CName())
	if err != nil {
		t.Fatal(err)
	}
	et, _ := crypto.GetEtype(session.KeyType)
	if err := auth.GenerateSeqNumberAndSubKey(session.KeyType, et.GetKeyByteSize()); err != nil {
		t.Fatal(err)
	}
	ck := make([]byte, 24)
	binary.LittleEndian.PutUint32(ck, 16)
	f := uint32(0x3C)
	if mutual {
		f |= 2
	}
	binary.LittleEndian.PutUint32(ck[20:], f)
	auth.Cksum = types.Checksum{CksumType: chksumtype.GSSAPI, Checksum: ck}
	req, err := messages.NewAPReq(tkt, session, auth)
	if err != nil {
		t.Fatal(err)
	}
	if mutual {
		types.SetFlag(&req.APOptions, flags.APOptionMutualRequired)
	}
	b, err := req.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	oid, _ := asn1.Marshal(gssapi.OIDKRB5.OID())
	tok := asn1tools.AddASNAppTag(append(append(oid, 0x01, 0x00), b...), 0)
	return &initiator{auth: auth, session: session, token: tok, sendSeq: uint64(auth.SeqNumber) & 0xffffffff}
}

// checkAPRep verifies the acceptor's AP-REP as the JDK's KrbApRep does.
func (in *initiator) checkAPRep(t *testing.T, tok []byte) {
	t.Helper()
	var k spnego.KRB5Token
	if err := k.Unmarshal(tok); err != nil || !k.IsAPRep() {
		t.Fatalf("AP-REP token: %v", err)
	}
	plain, err := crypto.DecryptEncPart(k.APRep.EncPart, in.session, keyusage.AP_REP_ENCPART)
	if err != nil {
		t.Fatal(err)
	}
	var part messages.EncAPRepPart
	if err := part.Unmarshal(plain); err != nil {
		t.Fatal(err)
	}
	if !part.CTime.Equal(in.auth.CTime.Truncate(time.Second)) && !part.CTime.Equal(in.auth.CTime) || part.Cusec != in.auth.Cusec {
		t.Fatalf("AP-REP time %v/%d, authenticator %v/%d", part.CTime, part.Cusec, in.auth.CTime, in.auth.Cusec)
	}
	in.recvSeq = uint64(part.SequenceNumber)
}

func (in *initiator) unwrap(t *testing.T, tok []byte) []byte {
	t.Helper()
	var wt gssapi.WrapToken
	if err := wt.Unmarshal(tok, true); err != nil {
		t.Fatal(err)
	}
	if ok, err := wt.Verify(in.auth.SubKey, usageAcceptorSeal); !ok || wt.SndSeqNum != in.recvSeq {
		t.Fatalf("acceptor token: %v, seq %d want %d", err, wt.SndSeqNum, in.recvSeq)
	}
	in.recvSeq++
	return wt.Payload
}

func (in *initiator) wrap(t *testing.T, p []byte) []byte {
	t.Helper()
	wt := gssapi.WrapToken{SndSeqNum: in.sendSeq, Payload: p}
	if err := wt.SetCheckSum(in.auth.SubKey, usageInitiatorSeal); err != nil {
		t.Fatal(err)
	}
	wt.EC = uint16(len(wt.CheckSum))
	in.sendSeq++
	b, _ := wt.Marshal()
	return b
}

// The GSSAPI acceptor against a real MIT KDC: mutual authentication with the AP-REP the
// client checks, the wrapped security-layer offer and choice, the client principal; a
// replayed AP-REQ, a ticket for another service and garbage are refused.
func TestGSSAPIServerWithMITKDC(t *testing.T) {
	k := kdctest.Start(t, "BOBBIN.TEST")
	k.AddPrincipal(t, "alice", "alice-secret")
	rmKT, err := keytab.Load(k.Keytab(t, "rm.keytab", "rm/localhost"))
	if err != nil {
		t.Fatal(err)
	}
	k.Keytab(t, "nm.keytab", "nm/localhost")
	cfg, err := config.Load(k.Krb5Conf())
	if err != nil {
		t.Fatal(err)
	}
	cl := client.NewWithPassword("alice", k.Realm, "alice-secret", cfg, client.DisablePAFXFAST(true))
	if err := cl.Login(); err != nil {
		t.Fatal(err)
	}
	defer cl.Destroy()

	for _, mutual := range []bool{true, false} {
		in := newInitiator(t, cl, "rm/localhost", mutual)
		s := NewGSSAPIServer(rmKT, "rm/localhost", QOPAuth|QOPIntegrity, 0)
		ans, done, err := s.Step(in.token)
		if err != nil || done {
			t.Fatalf("mutual %v: first step: %v %v", mutual, done, err)
		}
		if mutual {
			in.checkAPRep(t, ans)
			if ans, done, err = s.Step(nil); err != nil || done {
				t.Fatalf("empty response: %v %v", done, err)
			}
		} else {
			in.recvSeq = s.sendSeq - 1
		}
		offer := in.unwrap(t, ans)
		if len(offer) != 4 || offer[0] != QOPAuth|QOPIntegrity || binary.BigEndian.Uint32(offer)&0xffffff != maxBuffer {
			t.Fatalf("offer % x", offer)
		}
		ans, done, err = s.Step(in.wrap(t, []byte{QOPAuth, 0, 0, 0}))
		if err != nil || !done || ans != nil || s.Client() != "alice@BOBBIN.TEST" || s.QOP() != QOPAuth {
			t.Fatalf("choice: %x %v %v client %q qop %d", ans, done, err, s.Client(), s.QOP())
		}
		// The same AP-REQ again is a replay.
		if _, _, err := NewGSSAPIServer(rmKT, "rm/localhost", QOPAuth, 0).Step(in.token); !errors.Is(err, ErrGSSInitiate) {
			t.Fatalf("replayed AP-REQ: %v", err)
		}
	}
	// A ticket for the NodeManager does not open the RM.
	in := newInitiator(t, cl, "nm/localhost", true)
	if _, _, err := NewGSSAPIServer(rmKT, "rm/localhost", QOPAuth, 0).Step(in.token); !errors.Is(err, ErrGSSInitiate) {
		t.Fatalf("ticket for another service: %v", err)
	}
	// A protection not offered is refused.
	in = newInitiator(t, cl, "rm/localhost", true)
	s := NewGSSAPIServer(rmKT, "rm/localhost", QOPAuth, 0)
	ans, _, _ := s.Step(in.token)
	in.checkAPRep(t, ans)
	ans, _, _ = s.Step(nil)
	in.unwrap(t, ans)
	if _, _, err := s.Step(in.wrap(t, []byte{QOPPrivacy, 0, 1, 0})); !errors.Is(err, ErrGSSInitiate) {
		t.Fatalf("unoffered protection: %v", err)
	}
}

// FuzzGSSAPIServer feeds arbitrary first and second tokens to the acceptor: every one is
// refused with ErrGSSInitiate, none panics.
func FuzzGSSAPIServer(f *testing.F) {
	kt := keytab.New()
	if err := kt.AddEntry("rm/localhost", "BOBBIN.TEST", "secret", time.Unix(0, 0), 1, 18); err != nil {
		f.Fatal(err)
	}
	oid, _ := asn1.Marshal(gssapi.OIDKRB5.OID())
	f.Add([]byte{}, []byte{})
	f.Add(asn1tools.AddASNAppTag(append(oid, 0x01, 0x00, 0x6e, 0x03, 0x30, 0x01, 0x00), 0), []byte{0x05, 0x04, 0x00, 0xff})
	f.Add([]byte{0x60, 0x80}, []byte{})
	f.Add(asn1tools.AddASNAppTag(append(oid, 0x02, 0x00), 0), []byte(nil))
	f.Fuzz(func(t *testing.T, first, second []byte) {
		s := NewGSSAPIServer(kt, "rm/localhost", QOPAuth, 0)
		if _, done, err := s.Step(first); err == nil || done {
			t.Fatalf("garbage accepted: done %v", done)
		} else if !errors.Is(err, ErrGSSInitiate) {
			t.Fatalf("refusal not a GSS initiate failure: %v", err)
		}
		if _, done, err := s.Step(second); err == nil || done {
			t.Fatal("a failed exchange went on")
		}
	})
}
