package rpc

import (
	"errors"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
)

// dispatch runs one call on a handler goroutine, waiting for a free handler first; the
// wait is the server's back-pressure on readers.
func (c *serverConn) dispatch(h *commonpb.RpcRequestHeaderProto, rh *commonpb.RequestHeaderProto, body []byte) {
	caller := c.caller
	caller.Method = rh.GetMethodName()
	caller.CallID = h.GetCallId()
	caller.ClientID = h.GetClientId()
	caller.RetryCount = h.GetRetryCount()
	act := &c.srv.act
	c.inflight.Add(1)
	budget := c.budget // the call holds its request's bytes until it is done
	c.budget = 0
	act.waiting.Add(1)
	waitStart := time.Now()
	c.srv.handlers <- struct{}{}
	act.waiting.Add(-1)
	act.queueOps.Add(1)
	act.queueNanos.Add(int64(time.Since(waitStart)))
	c.calls.Add(1)
	if c.kept != nil {
		c.kept.CallStarted()
		// Idle now, not after this returns: the answer may be written (and the process
		// killed) before the reader gets there, and the record must then read idle.
		if c.br.Buffered() == 0 {
			c.kept.Idle()
		}
	}
	go func() {
		defer func() {
			<-c.srv.handlers
			c.srv.opts.ReadBudget.release(budget)
			c.inflight.Add(-1)
			c.calls.Done()
		}()
		c.runCall(&caller, rh, body) // its answer's write counts the call answered
	}()
}

func (c *serverConn) runCall(caller *Caller, rh *commonpb.RequestHeaderProto, body []byte) {
	start := time.Now()
	protoName := rh.GetDeclaringClassProtocolName()
	resp, err := c.invoke(caller, rh, body)
	c.srv.act.procOps.Add(1)
	c.srv.act.procNanos.Add(int64(time.Since(start)))
	if err == nil {
		c.srv.timer(protoName, caller.Method).UpdateSince(start)
		c.writeSuccess(caller, resp)
		return
	}
	var re *RemoteError
	var je JavaException
	switch {
	case errors.As(err, &re):
	case errors.As(err, &je):
		re = Errorf(je.JavaClass(), "%s", je.JavaMessage())
	default:
		// An untyped handler error still reaches Java as an exception it can rebuild.
		re = Errorf(c.srv.opts.ErrorClass, "%v", err)
	}
	c.srv.errs.Inc(1)
	c.log.WithFields(logrus.Fields{"method": caller.Method, "call": caller.CallID, "class": re.Class}).Debugf("IPC call failed: %s", re.Message)
	c.writeCallError(caller.CallID, caller.ClientID, caller.RetryCount, re)
}

func (c *serverConn) invoke(caller *Caller, rh *commonpb.RequestHeaderProto, body []byte) (m proto.Message, err error) {
	defer func() {
		// A handler bug must cost one call, not the server.
		if r := recover(); r != nil {
			c.log.WithField("method", caller.Method).Errorf("IPC handler panic: %v", r)
			m, err = nil, &RemoteError{Class: ClassRpcServerException, Message: fmt.Sprintf("internal error in %s: %v", caller.Method, r), Code: commonpb.RpcResponseHeaderProto_ERROR_RPC_SERVER}
		}
	}()
	if re := c.srv.standbyError(); re != nil {
		return nil, re
	}
	p, ok := c.srv.protocol(rh.GetDeclaringClassProtocolName())
	if !ok {
		return nil, &RemoteError{Class: ClassRpcNoSuchProtocol, Code: commonpb.RpcResponseHeaderProto_ERROR_NO_SUCH_PROTOCOL,
			Message: fmt.Sprintf("Unknown protocol: %s", rh.GetDeclaringClassProtocolName())}
	}
	if rh.GetClientProtocolVersion() != p.Version {
		return nil, &RemoteError{Class: ClassVersionMismatch, Code: commonpb.RpcResponseHeaderProto_ERROR_RPC_VERSION_MISMATCH,
			Message: fmt.Sprintf("Protocol %s version mismatch. (client = %d, server = %d)", p.Name, rh.GetClientProtocolVersion(), p.Version)}
	}
	meth, ok := p.Methods[caller.Method]
	if !ok {
		return nil, &RemoteError{Class: ClassRpcNoSuchMethod, Code: commonpb.RpcResponseHeaderProto_ERROR_NO_SUCH_METHOD,
			Message: fmt.Sprintf("Unknown method %s called on %s protocol.", caller.Method, p.Name)}
	}
	req, err := decodeDelimited(body, meth.decode)
	if err != nil {
		return nil, &RemoteError{Class: ClassRpcServerException, Code: commonpb.RpcResponseHeaderProto_ERROR_RPC_SERVER,
			Message: fmt.Sprintf("Error decoding request of %s: %v", caller.Method, err)}
	}
	ctx := WithCaller(c.srv.baseCtx, caller)
	return meth.handle(ctx, req)
}
