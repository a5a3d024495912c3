package sasl

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/jcmturner/gofork/encoding/asn1"
	"github.com/jcmturner/gokrb5/v8/asn1tools"
	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/chksumtype"
	"github.com/jcmturner/gokrb5/v8/iana/flags"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"
)

// hadoopGSSFlags are the context flags the JDK's GSSAPI SASL client asks for under
// Hadoop: mutual authentication, replay and sequence detection, confidentiality and
// integrity (0x3E).
const hadoopGSSFlags = 0x3E

// TicketSource gives a service ticket and its session key for a service principal
// (service/host, no realm): gokrb5's client.Client does, logged in from a keytab.
type TicketSource interface {
	GetServiceTicket(spn string) (messages.Ticket, types.EncryptionKey, error)
	CName() types.PrincipalName
	Realm() string
}

// GSSAPIClient is the initiator side of SASL GSSAPI as the JDK's GssKrb5Client runs it
// for Hadoop IPC: an AP-REQ asking for mutual authentication, the server's AP-REP checked,
// then the server's wrapped security-layer offer answered with the strongest protection
// both sides allow.
type GSSAPIClient struct {
	allow byte // QOP mask this side accepts

	stage   int
	auth    types.Authenticator
	session types.EncryptionKey
	key     types.EncryptionKey // the authenticator's subkey
	sendSeq uint64
	recvSeq uint64
	chosen  byte
}

// NewGSSAPIClient starts an exchange with the service spn (e.g. "rm/host1.example.com")
// using a ticket from src; allow is the protections this side accepts (at least
// QOPAuth). Start gives the first token.
func NewGSSAPIClient(allow byte) *GSSAPIClient {
	if allow == 0 {
		allow = QOPAuth
	}
	return &GSSAPIClient{allow: allow}
}

// QOP is the protection chosen, once the exchange is done.
func (c *GSSAPIClient) QOP() byte { return c.chosen }

// Start returns the initial context token: the AP-REQ for spn with the GSS checksum.
func (c *GSSAPIClient) Start(src TicketSource, spn string) ([]byte, error) {
	if c.stage != 0 {
		return nil, errors.New("GSSAPI exchange already started")
	}
	tkt, session, err := src.GetServiceTicket(spn)
	if err != nil {
		return nil, fmt.Errorf("service ticket for %s: %w", spn, err)
	}
	auth, err := types.NewAuthenticator(src.Realm(), src.CName())
	if err != nil {
		return nil, err
	}
	et, err := crypto.GetEtype(session.KeyType)
	if err != nil {
		return nil, err
	}
	if err := auth.GenerateSeqNumberAndSubKey(session.KeyType, et.GetKeyByteSize()); err != nil {
		return nil, err
	}
	// RFC 4121 §4.1.1: 16 bytes of (absent) channel bindings announced, then the flags.
	ck := make([]byte, 24)
	binary.LittleEndian.PutUint32(ck, 16)
	binary.LittleEndian.PutUint32(ck[20:], hadoopGSSFlags)
	auth.Cksum = types.Checksum{CksumType: chksumtype.GSSAPI, Checksum: ck}
	req, err := messages.NewAPReq(tkt, session, auth)
	if err != nil {
		return nil, err
	}
	types.SetFlag(&req.APOptions, flags.APOptionMutualRequired)
	b, err := req.Marshal()
	if err != nil {
		return nil, err
	}
	oid, err := asn1.Marshal(gssapi.OIDKRB5.OID())
	if err != nil {
		return nil, err
	}
	c.auth, c.session, c.key = auth, session, auth.SubKey
	c.sendSeq = uint64(auth.SeqNumber) & 0xffffffff
	c.stage = 1
	return asn1tools.AddASNAppTag(append(append(oid, 0x01, 0x00), b...), 0), nil
}

// Step takes the server's next challenge and returns the answer. After the answer to
// the security-layer offer the exchange waits only for the server's SUCCESS.
func (c *GSSAPIClient) Step(challenge []byte) ([]byte, error) {
	switch c.stage {
	case 1:
		if err := c.checkAPRep(challenge); err != nil {
			c.stage = -1
			return nil, err
		}
		c.stage = 2
		return []byte{}, nil
	case 2:
		ans, err := c.chooseLayer(challenge)
		if err != nil {
			c.stage = -1
			return nil, err
		}
		c.stage = 3
		return ans, nil
	default:
		return nil, errors.New("GSSAPI exchange: unexpected challenge")
	}
}

// Done reports whether the exchange reached the point where the server's SUCCESS ends it.
func (c *GSSAPIClient) Done() bool { return c.stage == 3 }

// checkAPRep verifies the acceptor's AP-REP as the JDK's KrbApRep does: it must decrypt
// with the session key and echo the authenticator's time.
func (c *GSSAPIClient) checkAPRep(tok []byte) error {
	var k spnego.KRB5Token
	if err := k.Unmarshal(tok); err != nil {
		return fmt.Errorf("server's AP-REP: %w", err)
	}
	if k.IsKRBError() {
		return fmt.Errorf("server refused the ticket: %s", k.KRBError.Error())
	}
	if !k.IsAPRep() {
		return errors.New("server's answer is not an AP-REP")
	}
	plain, err := crypto.DecryptEncPart(k.APRep.EncPart, c.session, keyusage.AP_REP_ENCPART)
	if err != nil {
		return fmt.Errorf("server's AP-REP does not decrypt with the session key: %w", err)
	}
	var part messages.EncAPRepPart
	if err := part.Unmarshal(plain); err != nil {
		return fmt.Errorf("server's AP-REP: %w", err)
	}
	if !part.CTime.Equal(c.auth.CTime.Truncate(time.Second)) && !part.CTime.Equal(c.auth.CTime) || part.Cusec != c.auth.Cusec {
		return errors.New("server's AP-REP does not answer this authenticator")
	}
	if part.Subkey.KeyType != 0 && len(part.Subkey.KeyValue) > 0 {
		c.key = part.Subkey
	}
	c.recvSeq = uint64(part.SequenceNumber) & 0xffffffff
	return nil
}

// chooseLayer unwraps the server's [mask][max buffer] offer and answers with the
// strongest protection in both masks and this side's buffer size.
func (c *GSSAPIClient) chooseLayer(tok []byte) ([]byte, error) {
	msg, err := c.Unwrap(tok)
	if err != nil {
		return nil, err
	}
	if len(msg) != 4 {
		return nil, fmt.Errorf("security layer offer of %d bytes, want 4", len(msg))
	}
	common := msg[0] & c.allow
	switch {
	case common&QOPPrivacy != 0:
		c.chosen = QOPPrivacy
	case common&QOPIntegrity != 0:
		c.chosen = QOPIntegrity
	case common&QOPAuth != 0:
		c.chosen = QOPAuth
	default:
		return nil, fmt.Errorf("No common protection layer between client and server (server offers %#x, client allows %#x)", msg[0], c.allow)
	}
	ans := binary.BigEndian.AppendUint32(nil, maxBuffer)
	ans[0] = c.chosen
	return c.wrapInteg(ans) // the choice itself is never sealed
}

func (c *GSSAPIClient) subkeyFlag() byte {
	if c.key.KeyType != c.auth.SubKey.KeyType || string(c.key.KeyValue) != string(c.auth.SubKey.KeyValue) {
		return flagAcceptorSubkey
	}
	return 0
}

// Wrap makes an initiator wrap token of p: sealed once privacy was chosen, else with
// integrity protection.
func (c *GSSAPIClient) Wrap(p []byte) ([]byte, error) {
	if c.chosen == QOPPrivacy && c.stage == 3 {
		tok, err := seal(c.key, c.subkeyFlag(), c.sendSeq, p, usageInitiatorSeal)
		if err == nil {
			c.sendSeq++
		}
		return tok, err
	}
	return c.wrapInteg(p)
}

func (c *GSSAPIClient) wrapInteg(p []byte) ([]byte, error) {
	wt := gssapi.WrapToken{SndSeqNum: c.sendSeq, Payload: append([]byte(nil), p...), Flags: c.subkeyFlag()}
	if err := wt.SetCheckSum(c.key, usageInitiatorSeal); err != nil {
		return nil, err
	}
	wt.EC = uint16(len(wt.CheckSum))
	c.sendSeq++
	return wt.Marshal()
}

// Unwrap verifies an acceptor wrap token (sealed once privacy was chosen, else with
// integrity protection), in sequence.
func (c *GSSAPIClient) Unwrap(tok []byte) ([]byte, error) {
	if c.chosen == QOPPrivacy && c.stage == 3 {
		p, seq, err := unseal(c.key, tok, true, usageAcceptorSeal)
		if err != nil {
			return nil, err
		}
		if seq != c.recvSeq {
			return nil, fmt.Errorf("server's wrap token out of sequence: %d, want %d", seq, c.recvSeq)
		}
		c.recvSeq++
		return p, nil
	}
	var wt gssapi.WrapToken
	if err := wt.Unmarshal(tok, true); err != nil {
		return nil, fmt.Errorf("server's wrap token: %w", err)
	}
	if wt.Flags&flagSealed != 0 {
		return nil, errors.New("a sealed wrap token where integrity was agreed")
	}
	if wt.RRC != 0 {
		return nil, errors.New("rotated wrap tokens are not served")
	}
	if ok, err := wt.Verify(c.key, usageAcceptorSeal); !ok {
		return nil, fmt.Errorf("server's wrap token: %w", err)
	}
	if wt.SndSeqNum != c.recvSeq {
		return nil, fmt.Errorf("server's wrap token out of sequence: %d, want %d", wt.SndSeqNum, c.recvSeq)
	}
	c.recvSeq++
	return wt.Payload, nil
}

// Tickets is the TicketSource of a gokrb5 client (logged in with a keytab or password).
func Tickets(cl *client.Client) TicketSource { return gokrb5Tickets{cl} }

type gokrb5Tickets struct{ *client.Client }

func (c gokrb5Tickets) CName() types.PrincipalName { return c.Credentials.CName() }
func (c gokrb5Tickets) Realm() string              { return c.Credentials.Domain() }
