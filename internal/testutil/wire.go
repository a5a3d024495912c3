package testutil

import (
	"context"
	"net"
	"sync/atomic"
)

// Wire dials TCP for a test's client (its Dial goes into rpc.ClientOptions) and counts
// the dials and the writes on the connections: a test knows a call has left the client
// when Writes moves, and that a connection survived when Dials does not.
type Wire struct{ Dials, Writes atomic.Int32 }

// Dial dials addr and counts the dial and every write on the connection.
func (w *Wire) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	w.Dials.Add(1)
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return countedConn{conn, w}, nil
}

type countedConn struct {
	net.Conn
	w *Wire
}

func (c countedConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.w.Writes.Add(1)
	return n, err
}
