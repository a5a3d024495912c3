package rpc

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
	"github.com/bobbin-yarn/bobbin/rpc/sasl"
)

// ClientKerberos is a client's Kerberos identity for KERBEROS (SASL GSSAPI)
// authentication: where its service tickets come from, and which server principal it
// accepts.
type ClientKerberos struct {
	Tickets sasl.TicketSource
	// ServerPrincipal is the service principal (service/host, no realm) the client
	// expects of this server, as Java's SaslRpcClient.getServerPrincipal works it out
	// from the configured principal key; a server advertising another is refused.
	ServerPrincipal string
	// QOP is the protections this side accepts (hadoop.rpc.protection); 0 means
	// authentication.
	QOP byte
}

// Principal is the client's own principal, name[/host]@REALM.
func (k *ClientKerberos) Principal() string {
	return k.Tickets.CName().PrincipalNameString() + "@" + k.Tickets.Realm()
}

// saslHandshake runs NEGOTIATE and the chosen method; it reports the method used.
func (c *Client) saslHandshake(conn *clientConn, preamble []byte) (AuthMethod, error) {
	pkt, err := AppendFrame(preamble, c.saslHeader(), &commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_NEGOTIATE.Enum()})
	if err != nil {
		return "", err
	}
	if _, err := conn.nc.Write(pkt); err != nil {
		return "", err
	}
	reply, err := conn.readSASL()
	if err != nil {
		return "", err
	}
	if reply.GetState() == commonpb.RpcSaslProto_SUCCESS {
		return AuthSimple, nil // SIMPLE-only server
	}
	if reply.GetState() != commonpb.RpcSaslProto_NEGOTIATE {
		return "", fmt.Errorf("unexpected SASL state %v in reply to NEGOTIATE", reply.GetState())
	}
	// The first method offered that this client can do, as Java's SaslRpcClient picks.
	var names []string
	for _, a := range reply.GetAuths() {
		names = append(names, a.GetMethod())
		switch {
		case a.GetMethod() == string(AuthToken) && a.GetMechanism() == sasl.Mechanism && c.opts.Token != nil:
			return AuthToken, c.tokenAuth(conn, a)
		case a.GetMethod() == string(AuthKerberos) && a.GetMechanism() == sasl.GSSAPI && c.opts.Kerberos != nil:
			layer, err := c.kerberosAuth(conn, a)
			if err == nil && layer != nil {
				conn.layer = layer
			}
			return AuthKerberos, err
		case a.GetMethod() == string(AuthSimple) && c.opts.Kerberos == nil:
			chosen := &commonpb.RpcSaslProto_SaslAuth{Method: a.Method, Mechanism: a.Mechanism}
			pkt, err := AppendFrame(nil, c.saslHeader(), &commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_INITIATE.Enum(), Auths: []*commonpb.RpcSaslProto_SaslAuth{chosen}})
			if err != nil {
				return "", err
			}
			_, err = conn.nc.Write(pkt)
			return AuthSimple, err
		}
	}
	return "", &RemoteError{Class: ClassAccessControl, Message: "Client cannot authenticate via:[" + strings.Join(names, ", ") + "]"}
}

// kerberosAuth runs SASL GSSAPI: the AP-REQ in INITIATE, the AP-REP and the wrapped
// security-layer offer in CHALLENGEs, SUCCESS with no token at the end.
func (c *Client) kerberosAuth(conn *clientConn, offered *commonpb.RpcSaslProto_SaslAuth) (Layer, error) {
	k := c.opts.Kerberos
	spn := offered.GetProtocol() + "/" + offered.GetServerId()
	if spn != k.ServerPrincipal {
		return nil, &RemoteError{Class: "java.lang.IllegalArgumentException",
			Message: fmt.Sprintf("Server has invalid Kerberos principal: %s@%s, expecting: %s@%s", spn, k.Tickets.Realm(), k.ServerPrincipal, k.Tickets.Realm())}
	}
	gc := sasl.NewGSSAPIClient(k.QOP)
	tok, err := gc.Start(k.Tickets, spn)
	if err != nil {
		return nil, fmt.Errorf("GSS initiate failed: %w", err)
	}
	chosen := &commonpb.RpcSaslProto_SaslAuth{Method: offered.Method, Mechanism: offered.Mechanism, Protocol: offered.Protocol, ServerId: offered.ServerId}
	msg := &commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_INITIATE.Enum(), Auths: []*commonpb.RpcSaslProto_SaslAuth{chosen}, Token: tok}
	for {
		pkt, err := AppendFrame(nil, c.saslHeader(), msg)
		if err != nil {
			return nil, err
		}
		if _, err := conn.nc.Write(pkt); err != nil {
			return nil, err
		}
		reply, err := conn.readSASL()
		if err != nil {
			return nil, err
		}
		switch reply.GetState() {
		case commonpb.RpcSaslProto_SUCCESS:
			if !gc.Done() {
				return nil, errors.New("GSS initiate failed: the server ended the exchange before it was complete")
			}
			if gc.QOP() != sasl.QOPAuth {
				return gc, nil // integrity: everything from now on travels in wrap tokens
			}
			return nil, nil
		case commonpb.RpcSaslProto_CHALLENGE:
			if reply.Token == nil {
				return nil, errors.New("Server challenge contains no token")
			}
			resp, err := gc.Step(reply.GetToken())
			if err != nil {
				return nil, fmt.Errorf("GSS initiate failed: %w", err)
			}
			msg = &commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_RESPONSE.Enum(), Token: resp}
		default:
			return nil, fmt.Errorf("unexpected SASL state %v during GSSAPI", reply.GetState())
		}
	}
}

func (c *Client) tokenAuth(conn *clientConn, offered *commonpb.RpcSaslProto_SaslAuth) error {
	dc := &sasl.Client{User: c.opts.Token.SASLUsername(), Password: c.opts.Token.SASLPassword(),
		DigestURI: offered.GetProtocol() + "/" + offered.GetServerId(), QOP: c.opts.QOP}
	chosen := proto.Clone(offered).(*commonpb.RpcSaslProto_SaslAuth)
	chosen.Challenge = nil
	msg := &commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_INITIATE.Enum(), Auths: []*commonpb.RpcSaslProto_SaslAuth{chosen}, Token: []byte{}}
	if ch := offered.GetChallenge(); len(ch) > 0 {
		resp, err := dc.Respond(ch)
		if err != nil {
			return err
		}
		msg.Token = resp
	}
	for {
		pkt, err := AppendFrame(nil, c.saslHeader(), msg)
		if err != nil {
			return err
		}
		if _, err := conn.nc.Write(pkt); err != nil {
			return err
		}
		reply, err := conn.readSASL()
		if err != nil {
			return err
		}
		switch reply.GetState() {
		case commonpb.RpcSaslProto_SUCCESS:
			if err := dc.VerifyFinal(reply.GetToken()); err != nil {
				return err
			}
			l, err := dc.Layer()
			if err != nil {
				return err
			}
			if l != nil {
				conn.layer = l
			}
			return nil
		case commonpb.RpcSaslProto_CHALLENGE:
			resp, err := dc.Respond(reply.GetToken())
			if err != nil {
				return err
			}
			msg = &commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_RESPONSE.Enum(), Token: resp}
		default:
			return fmt.Errorf("unexpected SASL state %v during DIGEST-MD5", reply.GetState())
		}
	}
}

func (c *Client) saslHeader() *commonpb.RpcRequestHeaderProto {
	h := c.header(CallIDSASL, -1)
	h.ClientId = []byte{}
	return h
}

func (cc *clientConn) readSASL() (*commonpb.RpcSaslProto, error) {
	pkt, err := ReadFrame(cc.br, cc.maxData)
	if err != nil {
		return nil, err
	}
	h, body, err := DecodeResponse(pkt)
	if err != nil {
		return nil, err
	}
	if h.GetStatus() != commonpb.RpcResponseHeaderProto_SUCCESS {
		return nil, remoteError(h)
	}
	if int32(h.GetCallId()) != CallIDSASL {
		return nil, fmt.Errorf("SASL reply with call id %d", int32(h.GetCallId()))
	}
	m := &commonpb.RpcSaslProto{}
	if _, err := ReadDelimited(body, m); err != nil {
		return nil, err
	}
	return m, nil
}
