package rpc

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
	"github.com/bobbin-yarn/bobbin/rpc/sasl"
)

// saslHandshake runs NEGOTIATE and the chosen method; it reports whether SIMPLE was chosen.
func (c *Client) saslHandshake(conn *clientConn, preamble []byte) (bool, error) {
	pkt, err := AppendFrame(preamble, c.saslHeader(), &commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_NEGOTIATE.Enum()})
	if err != nil {
		return false, err
	}
	if _, err := conn.nc.Write(pkt); err != nil {
		return false, err
	}
	reply, err := conn.readSASL()
	if err != nil {
		return false, err
	}
	if reply.GetState() == commonpb.RpcSaslProto_SUCCESS {
		return true, nil // SIMPLE-only server
	}
	if reply.GetState() != commonpb.RpcSaslProto_NEGOTIATE {
		return false, fmt.Errorf("unexpected SASL state %v in reply to NEGOTIATE", reply.GetState())
	}
	var names []string
	for _, a := range reply.GetAuths() {
		names = append(names, a.GetMethod())
		switch {
		case a.GetMethod() == string(AuthToken) && a.GetMechanism() == sasl.Mechanism && c.opts.Token != nil:
			return false, c.tokenAuth(conn, a)
		case a.GetMethod() == string(AuthSimple):
			chosen := &commonpb.RpcSaslProto_SaslAuth{Method: a.Method, Mechanism: a.Mechanism}
			pkt, err := AppendFrame(nil, c.saslHeader(), &commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_INITIATE.Enum(), Auths: []*commonpb.RpcSaslProto_SaslAuth{chosen}})
			if err != nil {
				return false, err
			}
			_, err = conn.nc.Write(pkt)
			return true, err
		}
	}
	return false, &RemoteError{Class: ClassAccessControl, Message: fmt.Sprintf("Client cannot authenticate via:%v", names)}
}

func (c *Client) tokenAuth(conn *clientConn, offered *commonpb.RpcSaslProto_SaslAuth) error {
	dc := &sasl.Client{User: c.opts.Token.SASLUsername(), Password: c.opts.Token.SASLPassword(),
		DigestURI: offered.GetProtocol() + "/" + offered.GetServerId()}
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
			return dc.VerifyFinal(reply.GetToken())
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
