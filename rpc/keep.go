package rpc

import (
	"bufio"
	"fmt"
	"io"
	"net"
)

// ConnKeeper keeps a server's accepted connections open across a crash of the server's
// process, so that a restarted server can go on serving them (package rpc/connkeep holds
// them in a separate process). A Hadoop client whose connection breaks sleeps its whole
// retry interval (30 s for YARN's RM proxies) before it tries again; a connection that
// never breaks only sees a slower answer.
//
// A connection can be taken over only at a frame boundary with no call unanswered, so the
// server tells its KeptConn what it is doing: the new process drops (closes) any kept
// connection that was in the middle of something, and the client retries as it would have.
type ConnKeeper interface {
	// Keep starts keeping a connection accepted by the named server; nil when it cannot.
	Keep(server string, nc net.Conn) KeptConn
}

// KeptConn is one kept connection's record.
type KeptConn interface {
	// Reader is what the server reads the connection through: it records that input is
	// being consumed before any byte is taken from the socket.
	Reader() io.Reader
	// Established records the connection's identity once the handshake is done; only an
	// established connection can be taken over.
	Established(ConnState)
	// Idle records that every byte read so far belongs to frames already handled.
	Idle()
	// CallStarted counts a call read; Written with answer set (or CallAnswered, for a
	// call whose answer cannot be written) counts it answered.
	CallStarted()
	CallAnswered()
	// Writing and Written bracket every write to the socket, under the connection's
	// write lock, with the bytes it carries; answer: they are a call's answer. A process
	// killed between the two leaves a record the next one can check against what the
	// socket actually sent, so an answer the client got is never taken for a lost one.
	Writing(n int, answer bool)
	Written(n int, answer bool)
	// Broken records that the stream is no longer whole (a write failed part way).
	Broken()
	// Closed ends the keeping, once the server has shut the socket down and closed it.
	Closed()
}

// ConnState is what a server needs to go on serving a connection another process of it
// set up: the outcome of its preamble, SASL exchange and connection context.
type ConnState struct {
	SASL      bool // the preamble asked for SASL
	Auth      AuthMethod
	User      string
	RealUser  string
	TokenKind string
	TokenID   []byte
	Protocol  string
}

// Adopt serves a connection an earlier process of this server set up (handed over by its
// ConnKeeper, with the state recorded by Established), from its next frame on. A TOKEN
// connection's token is checked again with this server's secret manager.
func (s *Server) Adopt(nc net.Conn, st ConnState, kc KeptConn) error {
	switch st.Auth {
	case AuthSimple:
		if s.opts.SecretManager != nil && s.opts.TokenRequired {
			return fmt.Errorf("rpc %s: adopt: SIMPLE authentication is not enabled", s.opts.Name)
		}
	case AuthToken:
		sm := s.opts.SecretManager
		if sm == nil {
			return fmt.Errorf("rpc %s: adopt: a TOKEN connection but no secret manager", s.opts.Name)
		}
		if _, _, err := sm.RetrievePassword(st.TokenID); err != nil {
			return fmt.Errorf("rpc %s: adopt: the connection's token no longer holds: %w", s.opts.Name, err)
		}
	default:
		return fmt.Errorf("rpc %s: adopt: unknown auth method %q", s.opts.Name, st.Auth)
	}
	c := newServerConn(s, nc)
	c.kept = kc
	if kc != nil {
		c.br = bufio.NewReaderSize(kc.Reader(), 512)
	}
	if st.SASL {
		c.preamble.Auth = AuthSASL
	}
	c.preamble.Version = CurrentVersion
	c.saslDone, c.contextRead, c.adopted = true, true, true
	c.caller.Auth, c.caller.User, c.caller.RealUser = st.Auth, st.User, st.RealUser
	c.caller.TokenKind, c.caller.TokenID, c.caller.Protocol = st.TokenKind, st.TokenID, st.Protocol
	c.log = c.log.WithField("user", st.User)
	if !s.start(c) {
		return ErrServerClosed
	}
	return nil
}

// SetKeeper makes the server keep the connections it accepts from now on with k.
// Call it before Serve.
func (s *Server) SetKeeper(k ConnKeeper) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keeper = k
}

// Name is the server's name (ServerOptions.Name).
func (s *Server) Name() string { return s.opts.Name }
