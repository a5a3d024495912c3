package rpc

import (
	"encoding/binary"
	"fmt"
	"net"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
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
	buf, _ := c.srv.frames.Get().(*[]byte)
	if buf == nil {
		buf = new([]byte)
	}
	if e, ok := resp.(*Encoded); ok {
		// Bytes made already (a large allocate answer) are written after the frame's
		// head as they are, not copied behind it into a frame buffer as large.
		head, err := AppendFrame((*buf)[:0], h)
		if err == nil {
			head = protowire.AppendVarint(head, uint64(len(e.Bytes)))
			binary.BigEndian.PutUint32(head, uint32(len(head)-4+len(e.Bytes)))
			c.writeAnswerParts(head, e.Bytes)
			*buf = head
			c.srv.frames.Put(buf)
			return
		}
	}
	pkt, err := AppendFrame((*buf)[:0], h, resp)
	if err != nil {
		c.srv.frames.Put(buf)
		c.writeCallError(caller.CallID, caller.ClientID, caller.RetryCount, &RemoteError{Class: ClassRpcServerException,
			Code: commonpb.RpcResponseHeaderProto_ERROR_SERIALIZING_RESPONSE, Message: fmt.Sprintf("Error serializing response: %v", err)})
		return
	}
	c.writeAnswer(pkt)
	// Written (or failed) synchronously, and neither the connection nor its keeper keep
	// the packet: the buffer is free. Large ones are dropped, not held by the pool.
	if cap(pkt) <= maxPooledFrame {
		*buf = pkt
		c.srv.frames.Put(buf)
	}
}

// maxPooledFrame is the largest response buffer kept for reuse.
const maxPooledFrame = 256 << 10

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

// writeAnswer writes a call's answer; the keeper's record counts the call answered in the
// same step that counts the bytes written (see KeptConn.Writing).
func (c *serverConn) writeAnswer(p []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	return c.writeLocked(p, true)
}

// writeAnswerParts writes a call's answer given as two parts, a frame's head and the rest:
// one writev where the connection allows, or (with a SASL layer, whose wrapping takes the
// whole frame) joined.
func (c *serverConn) writeAnswerParts(head, body []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.layer != nil {
		return c.writeLocked(append(head[:len(head):len(head)], body...), true)
	}
	if c.kept != nil {
		c.kept.Writing(len(head)+len(body), true)
	}
	c.nc.SetWriteDeadline(time.Now().Add(time.Minute))
	parts := net.Buffers{head, body}
	n, err := parts.WriteTo(c.nc)
	c.srv.act.sentBytes.Add(n)
	if c.kept != nil {
		if err != nil {
			c.kept.Broken() // part of the packet may be out: the stream cannot be taken over
		} else {
			c.kept.Written(int(n), true)
		}
	}
	return err
}

// answered counts a call answered for the keeper when no answer can be written.
func (c *serverConn) answered() {
	if c.kept != nil {
		c.kept.CallAnswered()
	}
}

// writeRaw writes a whole packet that answers no call under the connection's write lock.
// Write errors mean the peer is gone; the reader notices and closes.
func (c *serverConn) writeRaw(p []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	return c.writeLocked(p, false)
}

func (c *serverConn) writeLocked(p []byte, answer bool) error {
	if c.layer != nil {
		w, err := c.wrapFrame(p)
		if err != nil {
			c.log.WithError(err).Warn("IPC response not wrapped")
			return err
		}
		p = w
	}
	if c.kept != nil {
		c.kept.Writing(len(p), answer)
	}
	c.nc.SetWriteDeadline(time.Now().Add(time.Minute))
	n, err := c.nc.Write(p)
	c.srv.act.sentBytes.Add(int64(n))
	if c.kept != nil {
		if err != nil {
			c.kept.Broken() // part of the packet may be out: the stream cannot be taken over
		} else {
			c.kept.Written(n, answer)
		}
	}
	return err
}

// wireCallID encodes a call id for the response header, whose callId is uint32: negative
// ids travel as their two's-complement bit pattern, which the Java client accepts.
func wireCallID(id int32) *uint32 {
	v := uint32(id)
	return &v
}
