package rpc

import "sync/atomic"

// activity counts what Hadoop's RpcActivityForPort<port> bean reports of a server.
type activity struct {
	receivedBytes, sentBytes atomic.Int64
	queueOps, queueNanos     atomic.Int64 // calls that got a handler, and their wait for it
	procOps, procNanos       atomic.Int64 // calls run, and their time in the handler
	authnOK, authnFailed     atomic.Int64 // token (SASL) authentications
	authzOK, authzFailed     atomic.Int64 // connections admitted or refused after authentication
	waiting                  atomic.Int64 // calls waiting for a handler now
}

// Activity is a server's RPC activity since it was built, in the terms of Hadoop's
// RpcActivityForPort<port> bean.
type Activity struct {
	ReceivedBytes, SentBytes int64
	QueueTimeNumOps          int64
	QueueTimeAvgMillis       float64
	ProcessingTimeNumOps     int64
	ProcessingTimeAvgMillis  float64
	AuthenticationSuccesses  int64
	AuthenticationFailures   int64
	AuthorizationSuccesses   int64
	AuthorizationFailures    int64
	OpenConnections          int
	CallQueueLength          int64
	Handlers                 int
	Errors                   int64
}

// Activity reports the server's counters.
func (s *Server) Activity() Activity {
	a := &s.act
	avg := func(nanos, ops int64) float64 {
		if ops == 0 {
			return 0
		}
		return float64(nanos) / float64(ops) / 1e6
	}
	return Activity{
		ReceivedBytes: a.receivedBytes.Load(), SentBytes: a.sentBytes.Load(),
		QueueTimeNumOps: a.queueOps.Load(), QueueTimeAvgMillis: avg(a.queueNanos.Load(), a.queueOps.Load()),
		ProcessingTimeNumOps: a.procOps.Load(), ProcessingTimeAvgMillis: avg(a.procNanos.Load(), a.procOps.Load()),
		AuthenticationSuccesses: a.authnOK.Load(), AuthenticationFailures: a.authnFailed.Load(),
		AuthorizationSuccesses: a.authzOK.Load(), AuthorizationFailures: a.authzFailed.Load(),
		OpenConnections: s.connCount(), CallQueueLength: a.waiting.Load(),
	}
}
