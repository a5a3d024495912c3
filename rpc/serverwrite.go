package rpc

import (
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
)

func (c *serverConn) writeSuccess(caller *Caller, resp proto.Message) {
	h := &commonpb.RpcResponseHeaderProto{
		CallId:              wireCallID(caller.CallID),
		Status:              commonpb.RpcResponseHeaderProto_SUCCESS.Enum(),
		ServerIpcVersionNum: proto.Uint32(CurrentVersion),
		ClientId:            caller.ClientID,
		RetryCount:          proto.Int32(caller.RetryCount),
	}
	pkt, err := AppendFrame(nil, h, resp)
	if err != nil {
		c.writeCallError(caller.CallID, caller.ClientID, caller.RetryCount, &RemoteError{Class: ClassRpcServerException,
			Code: commonpb.RpcResponseHeaderProto_ERROR_SERIALIZING_RESPONSE, Message: fmt.Sprintf("Error serializing response: %v", err)})
		return
	}
	c.writeAnswer(pkt)
}

// writeCallError answers a call with an error.
func (c *serverConn) writeCallError(callID int32, clientID []byte, retry int32, re *RemoteError) {
	if pkt, ok := errorPacket(callID, clientID, retry, re); ok {
		c.writeAnswer(pkt)
		return
	}
	c.answered() // nothing can be written: the call is over all the same
}

// writeError writes an error that answers no call of a handler (a refused connection).
func (c *serverConn) writeError(callID int32, clientID []byte, retry int32, re *RemoteError) {
	if pkt, ok := errorPacket(callID, clientID, retry, re); ok {
		c.writeRaw(pkt)
	}
}

func errorPacket(callID int32, clientID []byte, retry int32, re *RemoteError) ([]byte, bool) {
	status := commonpb.RpcResponseHeaderProto_ERROR
	if re.Fatal {
		status = commonpb.RpcResponseHeaderProto_FATAL
	}
	code := re.Code
	if code == 0 {
		code = commonpb.RpcResponseHeaderProto_ERROR_APPLICATION
	}
	h := &commonpb.RpcResponseHeaderProto{
		CallId:              wireCallID(callID),
		Status:              status.Enum(),
		ServerIpcVersionNum: proto.Uint32(CurrentVersion),
		ExceptionClassName:  proto.String(re.Class),
		ErrorMsg:            proto.String(re.Message),
		ErrorDetail:         code.Enum(),
		ClientId:            clientID,
		RetryCount:          proto.Int32(retry),
	}
	pkt, err := AppendFrame(nil, h)
	return pkt, err == nil
}

// writeRaw writes a whole packet under the connection's write lock. Write errors mean the
// peer is gone; the reader notices and closes.
// writeAnswer writes a call's answer and, in the same breath, tells the connection keeper
// the call is answered: a kill right after the client got its answer must not find the
// call still counted (the restarted RM would then close a connection it could serve).
func (c *serverConn) writeAnswer(p []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	err := c.writeLocked(p)
	c.answered()
	return err
}

// answered counts a call's answer as written (or impossible) for the keeper.
func (c *serverConn) answered() {
	if c.kept != nil {
		c.kept.CallAnswered()
	}
}

func (c *serverConn) writeRaw(p []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	return c.writeLocked(p)
}

func (c *serverConn) writeLocked(p []byte) error {
	c.nc.SetWriteDeadline(time.Now().Add(time.Minute))
	n, err := c.nc.Write(p)
	c.srv.act.sentBytes.Add(int64(n))
	if err != nil && c.kept != nil {
		c.kept.Broken() // part of the packet may be out: the stream cannot be taken over
	}
	return err
}

// wireCallID encodes a call id for the response header, whose callId is uint32: negative
// ids travel as their two's-complement bit pattern, which the Java client accepts.
func wireCallID(id int32) *uint32 {
	v := uint32(id)
	return &v
}
