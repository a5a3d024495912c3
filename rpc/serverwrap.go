package rpc

import (
	"encoding/binary"
	"fmt"
	"io"

	"google.golang.org/protobuf/proto"

	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
)

// Layer is a SASL security layer agreed for a connection (QOP integrity or privacy):
// after the exchange every byte each side sends travels in its tokens.
type Layer interface {
	Wrap(p []byte) ([]byte, error)
	Unwrap(token []byte) ([]byte, error)
}

// setLayer starts wrapping with l; it is called on the reader goroutine right after the
// SASL SUCCESS went out unwrapped. A wrapped stream cannot be handed to another process.
func (c *serverConn) setLayer(l Layer) {
	c.writeMu.Lock()
	c.layer = l
	c.writeMu.Unlock()
	if c.kept != nil {
		c.kept.Broken()
	}
}

// unwrapPacket takes a SASL WRAP packet (callId -33) of a wrapped connection and
// processes every whole frame its token completes: the client's frame stream is cut into
// tokens without regard to frame bounds (Java's SaslOutputStream).
func (c *serverConn) unwrapPacket(packet []byte) error {
	req, err := DecodeRequest(packet)
	if err != nil || req.Header.GetCallId() != CallIDSASL {
		return fatalf(commonpb.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER, ClassSaslException, "expected a SASL WRAP packet on a connection with a security layer")
	}
	msg := &commonpb.RpcSaslProto{}
	if _, err := ReadDelimited(req.Payload, msg); err != nil || msg.GetState() != commonpb.RpcSaslProto_WRAP {
		return fatalf(commonpb.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER, ClassSaslException, "expected a SASL WRAP message, got %v", msg.GetState())
	}
	plain, err := c.layer.Unwrap(msg.GetToken())
	if err != nil {
		return fatalf(commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, ClassSaslException, "%v", err)
	}
	c.unwrapped = append(c.unwrapped, plain...)
	// The packet's bytes are unwrapped: what it held of the read budget goes back, and
	// each whole frame takes its own share, for the call it becomes.
	budget := c.srv.opts.ReadBudget
	budget.release(c.budget)
	c.budget = 0
	for len(c.unwrapped) >= 4 {
		n := int(int32(binary.BigEndian.Uint32(c.unwrapped)))
		if n < 0 || n > c.srv.opts.MaxDataLength {
			return fatalf(commonpb.RpcResponseHeaderProto_FATAL_INVALID_RPC_HEADER, ClassIOException, "%v: %d", ErrFrameTooLarge, n)
		}
		if len(c.unwrapped) < 4+n {
			break
		}
		if !budget.acquire(int64(n), c.stopped) {
			return io.EOF // stopping
		}
		c.budget = int64(n)
		frame := append([]byte(nil), c.unwrapped[4:4+n]...)
		c.unwrapped = c.unwrapped[4+n:]
		err := c.processPacket(frame)
		budget.release(c.budget) // unless a call took it over
		c.budget = 0
		if err != nil {
			return err
		}
	}
	if len(c.unwrapped) == 0 {
		c.unwrapped = nil
	}
	return nil
}

// wrapFrame turns a whole response frame into the SASL WRAP frame that carries it
// (Java's Server.wrapWithSasl: callId -33, SUCCESS, the token of the frame with its length).
func (c *serverConn) wrapFrame(p []byte) ([]byte, error) {
	tok, err := c.layer.Wrap(p)
	if err != nil {
		return nil, err
	}
	h := &commonpb.RpcResponseHeaderProto{
		CallId:              wireCallID(CallIDSASL),
		Status:              commonpb.RpcResponseHeaderProto_SUCCESS.Enum(),
		ServerIpcVersionNum: proto.Uint32(CurrentVersion),
	}
	return AppendFrame(nil, h, &commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_WRAP.Enum(), Token: tok})
}

// write sends a whole request frame, in a wrap token when the connection has a layer.
func (cc *clientConn) write(pkt []byte) error {
	cc.writeMu.Lock()
	defer cc.writeMu.Unlock()
	if cc.layer != nil {
		tok, err := cc.layer.Wrap(pkt)
		if err != nil {
			return err
		}
		h := &commonpb.RpcRequestHeaderProto{RpcKind: commonpb.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(),
			RpcOp: commonpb.RpcRequestHeaderProto_RPC_FINAL_PACKET.Enum(), CallId: proto.Int32(CallIDSASL), ClientId: []byte{}, RetryCount: proto.Int32(-1)}
		if pkt, err = AppendFrame(nil, h, &commonpb.RpcSaslProto{State: commonpb.RpcSaslProto_WRAP.Enum(), Token: tok}); err != nil {
			return err
		}
	}
	_, err := cc.nc.Write(pkt)
	return err
}

// readFrame reads the next response frame (its body), unwrapping SASL WRAP frames on a
// connection with a layer.
func (cc *clientConn) readFrame() ([]byte, error) {
	if cc.layer == nil {
		return ReadFrame(cc.br, cc.maxData)
	}
	for {
		if len(cc.unwrapped) >= 4 {
			n := int(int32(binary.BigEndian.Uint32(cc.unwrapped)))
			if n < 0 || n > cc.maxData {
				return nil, fmt.Errorf("%w: %d", ErrFrameTooLarge, n)
			}
			if len(cc.unwrapped) >= 4+n {
				frame := append([]byte(nil), cc.unwrapped[4:4+n]...)
				cc.unwrapped = cc.unwrapped[4+n:]
				return frame, nil
			}
		}
		pkt, err := ReadFrame(cc.br, cc.maxData)
		if err != nil {
			return nil, err
		}
		h, body, err := DecodeResponse(pkt)
		if err != nil {
			return nil, err
		}
		if int32(h.GetCallId()) != CallIDSASL {
			return pkt, nil // not wrapped (a fatal answer before the layer was in use)
		}
		msg := &commonpb.RpcSaslProto{}
		if _, err := ReadDelimited(body, msg); err != nil || msg.GetState() != commonpb.RpcSaslProto_WRAP {
			return nil, fmt.Errorf("expected a SASL WRAP response, got %v (%v)", msg.GetState(), err)
		}
		plain, err := cc.layer.Unwrap(msg.GetToken())
		if err != nil {
			return nil, err
		}
		cc.unwrapped = append(cc.unwrapped, plain...)
	}
}
