package rpc

import (
	"encoding/base64"
	"errors"
	"strings"

	"google.golang.org/protobuf/proto"

	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
	"github.com/bobbin-yarn/bobbin/rpc/sasl"
)

// processSASL handles one SASL message (callId -33). See protocol.md §2.1.
func (c *serverConn) processSASL(payload []byte) error {
	msg := &commonpb.RpcSaslProto{}
	if _, err := ReadDelimited(payload, msg); err != nil {
		return fatalf(commonpb.RpcResponseHeaderProto_FATAL_DESERIALIZING_REQUEST, ClassSaslException, "Error decoding RpcSaslProto: %v", err)
	}
	sm := c.srv.opts.SecretManager
	switch msg.GetState() {
	case commonpb.RpcSaslProto_NEGOTIATE:
		c.log.WithField("token_auth", sm != nil).Debug("SASL negotiation")
		if sm == nil && c.srv.opts.Kerberos == nil {
			// SIMPLE-only: SUCCESS tells the client to fall back to SIMPLE.
			c.saslDone = true
			c.caller.Auth = AuthSimple
			return c.writeSASL(&commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_SUCCESS.Enum()})
		}
		if re := c.srv.standbyError(); re != nil {
			// A standby cannot verify tokens: the client hears StandbyException (as a
			// fatal answer to its negotiation) and its failover proxy moves on.
			re.Code, re.Fatal = commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, true
			return re
		}
		if sm != nil {
			c.digest = c.newDigest()
		}
		return c.writeSASL(&commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_NEGOTIATE.Enum(), Auths: c.advertised(true)})
	case commonpb.RpcSaslProto_INITIATE:
		if len(msg.GetAuths()) == 0 {
			return fatalf(commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, ClassSaslException, "Client mechanism is malformed")
		}
		chosen := msg.GetAuths()[0]
		if !c.offers(chosen) {
			if chosen.GetMethod() == string(AuthSimple) {
				// Java's words (Server.Connection.processSaslMessage), two spaces included.
				return fatalf(commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, ClassAccessControl,
					"SIMPLE authentication is not enabled.  Available:%v", c.methodNames())
			}
			return fatalf(commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, ClassAccessControl,
				"Client mechanism is not supported: %s/%s. Available:%v", chosen.GetMethod(), chosen.GetMechanism(), c.methodNames())
		}
		if chosen.GetMethod() == string(AuthKerberos) {
			if len(msg.GetToken()) == 0 {
				return fatalf(commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, ClassSaslException, "Client did not send a token")
			}
			c.gss = c.srv.opts.Kerberos.Acceptor()
			return c.stepGSS(msg.GetToken())
		}
		if chosen.GetMethod() == string(AuthSimple) {
			c.saslDone = true // SIMPLE: no reply; the connection context follows
			c.caller.Auth = AuthSimple
			return nil
		}
		if c.digest == nil {
			c.digest = c.newDigest()
		}
		if len(msg.GetToken()) == 0 {
			return c.writeSASL(&commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_CHALLENGE.Enum(), Token: c.digest.Challenge()})
		}
		return c.verifyToken(msg.GetToken())
	case commonpb.RpcSaslProto_RESPONSE:
		if c.gss != nil {
			if msg.Token == nil {
				return fatalf(commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, ClassSaslException, "Client did not send a token")
			}
			return c.stepGSS(msg.GetToken())
		}
		if c.digest == nil {
			return fatalf(commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, ClassSaslException, "SASL RESPONSE before INITIATE")
		}
		return c.verifyToken(msg.GetToken())
	default:
		return fatalf(commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, ClassSaslException, "Unexpected SASL state %v", msg.GetState())
	}
}

func (c *serverConn) verifyToken(response []byte) error {
	sm := c.srv.opts.SecretManager
	var tokenID []byte
	var tokenUser string
	_, final, err := c.digest.Verify(response, func(username string) (string, error) {
		id, err := base64.StdEncoding.DecodeString(username)
		if err != nil {
			return "", fatalf(commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, ClassInvalidToken, "malformed token identifier in SASL user name")
		}
		pw, u, err := sm.RetrievePassword(id)
		if err != nil {
			return "", err
		}
		tokenID, tokenUser = id, u
		return base64.StdEncoding.EncodeToString(pw), nil
	})
	if err != nil {
		var re *RemoteError
		if errors.As(err, &re) {
			re.Fatal, re.Code = true, commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED
			return re
		}
		if errors.Is(err, sasl.ErrAuthFailed) {
			return fatalf(commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, ClassSaslException, "%v", err)
		}
		return fatalf(commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, ClassInvalidToken, "%v", err)
	}
	c.saslDone = true
	c.caller.Auth = AuthToken
	c.caller.User = tokenUser
	c.caller.TokenKind = sm.TokenKind()
	c.caller.TokenID = tokenID
	c.srv.act.authnOK.Add(1)
	if err := c.writeSASL(&commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_SUCCESS.Enum(), Token: final}); err != nil {
		return err
	}
	if l := c.digest.Layer(); l != nil {
		c.setLayer(l)
	}
	return nil
}

func (c *serverConn) newDigest() *sasl.Server {
	d := sasl.NewServer()
	d.QOP = c.srv.opts.QOP
	return d
}

// stepGSS runs one step of the KERBEROS exchange: a CHALLENGE with the acceptor's token,
// or, once the security layer is agreed, SUCCESS without a token (Java's client refuses
// one) and the caller's identity.
func (c *serverConn) stepGSS(token []byte) error {
	answer, done, err := c.gss.Step(token)
	if err != nil {
		c.log.WithError(err).Warn("Kerberos authentication failed")
		return fatalf(commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, ClassSaslException, "GSS initiate failed")
	}
	if !done {
		return c.writeSASL(&commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_CHALLENGE.Enum(), Token: answer})
	}
	principal := c.gss.Client()
	user, err := c.srv.opts.Kerberos.ShortName(principal)
	if err != nil {
		c.log.WithError(err).WithField("principal", principal).Warn("Kerberos principal not mapped to a user")
		return fatalf(commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, ClassAccessControl, "Illegal principal name %s: %v", principal, err)
	}
	c.saslDone = true
	c.caller.Auth, c.caller.Principal, c.caller.User = AuthKerberos, principal, user
	c.srv.act.authnOK.Add(1)
	if err := c.writeSASL(&commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_SUCCESS.Enum()}); err != nil {
		return err
	}
	if c.gss.QOP() != sasl.QOPAuth {
		c.setLayer(c.gss) // integrity: everything after SUCCESS travels in wrap tokens
	}
	return nil
}

// advertised lists the server's auth methods in preference order, with the pre-computed
// DIGEST-MD5 challenge when withChallenge is set.
func (c *serverConn) advertised(withChallenge bool) []*commonpb.RpcSaslProto_SaslAuth {
	var auths []*commonpb.RpcSaslProto_SaslAuth
	if c.srv.opts.SecretManager != nil {
		a := &commonpb.RpcSaslProto_SaslAuth{
			Method:    proto.String(string(AuthToken)),
			Mechanism: proto.String(sasl.Mechanism),
			Protocol:  proto.String(""),
			ServerId:  proto.String(sasl.DefaultRealm),
		}
		if withChallenge && c.digest != nil {
			a.Challenge = c.digest.Challenge()
		}
		auths = append(auths, a)
	}
	if k := c.srv.opts.Kerberos; k != nil {
		auths = append(auths, &commonpb.RpcSaslProto_SaslAuth{Method: proto.String(string(AuthKerberos)), Mechanism: proto.String(sasl.GSSAPI),
			Protocol: proto.String(k.Protocol), ServerId: proto.String(k.ServerID)})
	} else if c.srv.opts.SecretManager == nil || !c.srv.opts.TokenRequired {
		auths = append(auths, &commonpb.RpcSaslProto_SaslAuth{Method: proto.String(string(AuthSimple)), Mechanism: proto.String("")})
	}
	return auths
}

// offers reports whether a client's chosen SaslAuth equals one the server advertises
// (method, mechanism, protocol and serverId; the challenge is not compared).
func (c *serverConn) offers(a *commonpb.RpcSaslProto_SaslAuth) bool {
	for _, mine := range c.advertised(false) {
		if mine.GetMethod() == a.GetMethod() && mine.GetMechanism() == a.GetMechanism() &&
			mine.GetProtocol() == a.GetProtocol() && mine.GetServerId() == a.GetServerId() {
			return true
		}
	}
	return false
}

// methodNames lists the methods offered as Java prints a List: "[TOKEN, KERBEROS]".
func (c *serverConn) methodNames() string {
	var names []string
	for _, a := range c.advertised(false) {
		names = append(names, a.GetMethod())
	}
	return "[" + strings.Join(names, ", ") + "]"
}

func (c *serverConn) writeSASL(m *commonpb.RpcSaslProto) error {
	h := &commonpb.RpcResponseHeaderProto{
		CallId:              wireCallID(CallIDSASL),
		Status:              commonpb.RpcResponseHeaderProto_SUCCESS.Enum(),
		ServerIpcVersionNum: proto.Uint32(CurrentVersion),
	}
	pkt, err := AppendFrame(nil, h, m)
	if err != nil {
		return err
	}
	return c.writeRaw(pkt)
}
