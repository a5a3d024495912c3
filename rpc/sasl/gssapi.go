package sasl

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/jcmturner/gofork/encoding/asn1"
	"github.com/jcmturner/gokrb5/v8/asn1tools"
	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/asnAppTag"
	"github.com/jcmturner/gokrb5/v8/iana/chksumtype"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/iana/msgtype"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/service"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"
)

// GSSAPI is the SASL mechanism name of Kerberos 5 (RFC 4752).
const GSSAPI = "GSSAPI"

// Protection masks of the GSSAPI security layer (RFC 4752 §3.3), as hadoop.rpc.protection
// names them: authentication, integrity, privacy.
const (
	QOPAuth      byte = 0x01
	QOPIntegrity byte = 0x02
	QOPPrivacy   byte = 0x04
)

// maxBuffer is the largest wrapped message this side accepts, as the JDK advertises it.
const maxBuffer = 65536

// Key usages of RFC 4121 wrap tokens.
const (
	usageAcceptorSeal  = 22
	usageInitiatorSeal = 24
)

// gssChecksumFlags are the GSS context flags in the 0x8003 authenticator checksum.
const (
	flagMutual = 2
)

// ErrGSSInitiate is what a failed exchange reaches a Java client as (the JDK's
// GssKrb5Server message); the reason goes to the server's log.
var ErrGSSInitiate = errors.New("GSS initiate failed")

// GSSAPIServer is the acceptor side of SASL GSSAPI over Kerberos 5, as the JDK's
// GssKrb5Server runs it for Hadoop IPC: it verifies the client's AP-REQ with the service's
// keytab, answers an AP-REP when the client asks for mutual authentication, then offers
// its protections in a wrapped four-byte message and takes the client's choice.
type GSSAPIServer struct {
	keytab    *keytab.Keytab
	principal string // the service principal without realm, e.g. "rm/host1.example.com"
	offer     byte   // QOP mask offered
	skew      time.Duration

	stage   int
	key     types.EncryptionKey // the initiator's subkey, else the ticket's session key
	sendSeq uint64
	recvSeq uint64
	client  string
	chosen  byte
}

// NewGSSAPIServer returns an acceptor for principal (service/host, no realm) whose keys are
// in kt, offering the protections in offer (at least QOPAuth).
func NewGSSAPIServer(kt *keytab.Keytab, principal string, offer byte, maxSkew time.Duration) *GSSAPIServer {
	if offer == 0 {
		offer = QOPAuth
	}
	if maxSkew <= 0 {
		maxSkew = 5 * time.Minute
	}
	return &GSSAPIServer{keytab: kt, principal: principal, offer: offer, skew: maxSkew}
}

// Client is the authenticated client principal (name@REALM), once Step reported done.
func (s *GSSAPIServer) Client() string { return s.client }

// QOP is the protection the client chose (QOPAuth, QOPIntegrity or QOPPrivacy).
func (s *GSSAPIServer) QOP() byte { return s.chosen }

// Step takes the client's next token and returns the server's answer. done reports that
// the exchange succeeded (the answer is then nil: Hadoop's SUCCESS carries no token). Any
// error ends the exchange; it wraps ErrGSSInitiate.
func (s *GSSAPIServer) Step(token []byte) (answer []byte, done bool, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w: %v", ErrGSSInitiate, err)
			s.stage = -1
		}
	}()
	switch s.stage {
	case 0:
		return s.accept(token)
	case 1:
		// The client's empty answer to the AP-REP.
		if len(token) != 0 {
			return nil, false, errors.New("Handshake expecting no response data from server")
		}
		s.stage = 2
		return s.offerLayers()
	case 2:
		return s.takeChoice(token)
	default:
		return nil, false, errors.New("GSSAPI exchange already ended")
	}
}

func (s *GSSAPIServer) accept(token []byte) ([]byte, bool, error) {
	var tok spnego.KRB5Token
	if err := tok.Unmarshal(token); err != nil {
		return nil, false, err
	}
	if !tok.IsAPReq() {
		return nil, false, errors.New("the initial token is not an AP-REQ")
	}
	settings := service.NewSettings(s.keytab, service.KeytabPrincipal(s.principal), service.MaxClockSkew(s.skew), service.DecodePAC(false))
	ok, creds, err := service.VerifyAPREQ(&tok.APReq, settings)
	if err != nil {
		return nil, false, err
	}
	if !ok {
		return nil, false, errors.New("AP-REQ not verified")
	}
	auth := tok.APReq.Authenticator
	// The GSS checksum (RFC 4121 §4.1.1): 16 bytes of channel bindings announced, then the
	// context flags, little-endian. The JDK refuses an authenticator without it.
	ck := auth.Cksum.Checksum
	if auth.Cksum.CksumType != chksumtype.GSSAPI || len(ck) < 24 || binary.LittleEndian.Uint32(ck[0:4]) != 16 {
		return nil, false, errors.New("no GSS checksum in the AP-REQ's authenticator")
	}
	flags := binary.LittleEndian.Uint32(ck[20:24])
	session := tok.APReq.Ticket.DecryptedEncPart.Key
	s.key = session
	if auth.SubKey.KeyType != 0 && len(auth.SubKey.KeyValue) > 0 {
		s.key = auth.SubKey
	}
	if _, err := crypto.GetEtype(s.key.KeyType); err != nil {
		return nil, false, err
	}
	s.recvSeq = uint64(auth.SeqNumber) & 0xffffffff
	seq, err := rand.Int(rand.Reader, big.NewInt(1<<30))
	if err != nil {
		return nil, false, err
	}
	s.sendSeq = seq.Uint64()
	s.client = creds.UserName() + "@" + creds.Domain()
	if flags&flagMutual == 0 {
		s.stage = 2
		return s.offerLayers()
	}
	rep, err := apRep(auth, session, int64(s.sendSeq))
	if err != nil {
		return nil, false, err
	}
	s.stage = 1
	return rep, false, nil
}

// apRep is the GSS AP-REP token proving the server's key: the authenticator's time,
// encrypted with the session key, and the acceptor's first sequence number.
func apRep(auth types.Authenticator, session types.EncryptionKey, seq int64) ([]byte, error) {
	part, err := asn1.Marshal(messages.EncAPRepPart{CTime: auth.CTime.UTC(), Cusec: auth.Cusec, SequenceNumber: seq})
	if err != nil {
		return nil, err
	}
	ed, err := crypto.GetEncryptedData(asn1tools.AddASNAppTag(part, asnAppTag.EncAPRepPart), session, keyusage.AP_REP_ENCPART, 0)
	if err != nil {
		return nil, err
	}
	rep, err := asn1.Marshal(messages.APRep{PVNO: 5, MsgType: msgtype.KRB_AP_REP, EncPart: ed})
	if err != nil {
		return nil, err
	}
	oid, err := asn1.Marshal(gssapi.OIDKRB5.OID())
	if err != nil {
		return nil, err
	}
	b := append(oid, 0x02, 0x00)
	b = append(b, asn1tools.AddASNAppTag(rep, asnAppTag.APREP)...)
	return asn1tools.AddASNAppTag(b, 0), nil
}

// offerLayers is the wrapped [mask][max buffer] message (RFC 4752 §3.1).
func (s *GSSAPIServer) offerLayers() ([]byte, bool, error) {
	msg := binary.BigEndian.AppendUint32(nil, maxBuffer) // 00 01 00 00: the mask goes in the top byte
	msg[0] = s.offer
	w, err := s.wrapInteg(msg)
	return w, false, err
}

func (s *GSSAPIServer) takeChoice(token []byte) ([]byte, bool, error) {
	msg, err := s.Unwrap(token)
	if err != nil {
		return nil, false, err
	}
	if len(msg) < 1 {
		return nil, false, errors.New("empty security layer choice")
	}
	if msg[0]&s.offer == 0 || msg[0]&(msg[0]-1) != 0 {
		return nil, false, fmt.Errorf("Client selected unsupported protection: %d", msg[0])
	}
	s.chosen = msg[0]
	if len(msg) > 4 && string(msg[4:]) != s.client {
		return nil, false, fmt.Errorf("authorization id %q is not the authenticated %s", msg[4:], s.client)
	}
	s.stage = 3
	return nil, true, nil
}

// Wrap makes an acceptor wrap token of p: sealed once privacy was chosen, else with
// integrity protection (RFC 4121 §4.2.6.2).
func (s *GSSAPIServer) Wrap(p []byte) ([]byte, error) {
	if s.chosen == QOPPrivacy {
		tok, err := seal(s.key, flagSentByAcceptor, s.sendSeq, p, usageAcceptorSeal)
		if err == nil {
			s.sendSeq++
		}
		return tok, err
	}
	return s.wrapInteg(p)
}

func (s *GSSAPIServer) wrapInteg(p []byte) ([]byte, error) {
	wt := gssapi.WrapToken{Flags: 0x01, SndSeqNum: s.sendSeq, Payload: append([]byte(nil), p...)}
	if err := wt.SetCheckSum(s.key, usageAcceptorSeal); err != nil {
		return nil, err
	}
	wt.EC = uint16(len(wt.CheckSum))
	s.sendSeq++
	return wt.Marshal()
}

// Unwrap verifies an initiator wrap token (sealed once privacy was chosen, else with
// integrity protection) and returns its payload; tokens must come in sequence, as the JDK
// requires.
func (s *GSSAPIServer) Unwrap(token []byte) ([]byte, error) {
	if s.chosen == QOPPrivacy {
		p, seq, err := unseal(s.key, token, false, usageInitiatorSeal)
		if err != nil {
			return nil, err
		}
		if seq != s.recvSeq {
			return nil, fmt.Errorf("wrap token out of sequence: %d, want %d", seq, s.recvSeq)
		}
		s.recvSeq++
		return p, nil
	}
	var wt gssapi.WrapToken
	if err := wt.Unmarshal(token, false); err != nil {
		return nil, err
	}
	if wt.Flags&flagSealed != 0 {
		return nil, errors.New("a sealed wrap token where integrity was agreed")
	}
	if wt.RRC != 0 {
		return nil, errors.New("rotated wrap tokens are not served")
	}
	if ok, err := wt.Verify(s.key, usageInitiatorSeal); !ok {
		return nil, err
	}
	if wt.SndSeqNum != s.recvSeq {
		return nil, fmt.Errorf("wrap token out of sequence: %d, want %d", wt.SndSeqNum, s.recvSeq)
	}
	s.recvSeq++
	return wt.Payload, nil
}
