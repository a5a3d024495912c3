package sasl

import (
	"crypto/hmac"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
)

// RFC 2831 §2.3 magic constants for the integrity keys.
const (
	magicClientSign = "Digest session key to client-to-server signing key magic constant"
	magicServerSign = "Digest session key to server-to-client signing key magic constant"
)

// Integrity is DIGEST-MD5's integrity layer (qop auth-int, RFC 2831 §2.3): each message
// goes out as message || HMAC-MD5(Ki, seq || message)[:10] || 0x0001 || seq, with the
// sender's key (Kic client to server, Kis server to client) and a sequence number per
// direction starting at 0.
type Integrity struct {
	mu               sync.Mutex
	sendKey, recvKey []byte
	sendSeq, recvSeq uint32
}

func newIntegrity(ha1 [16]byte, client bool) *Integrity {
	kic := md5.Sum(append(ha1[:], magicClientSign...))
	kis := md5.Sum(append(ha1[:], magicServerSign...))
	if client {
		return &Integrity{sendKey: kic[:], recvKey: kis[:]}
	}
	return &Integrity{sendKey: kis[:], recvKey: kic[:]}
}

func mac(key []byte, seq uint32, msg []byte) []byte {
	h := hmac.New(md5.New, key)
	var s [4]byte
	binary.BigEndian.PutUint32(s[:], seq)
	h.Write(s[:])
	h.Write(msg)
	return h.Sum(nil)[:10]
}

// Wrap protects p for the peer.
func (l *Integrity) Wrap(p []byte) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]byte, 0, len(p)+16)
	out = append(out, p...)
	out = append(out, mac(l.sendKey, l.sendSeq, p)...)
	out = append(out, 0, 1)
	out = binary.BigEndian.AppendUint32(out, l.sendSeq)
	l.sendSeq++
	return out, nil
}

// Unwrap checks a peer's message: its MAC, type and sequence number (in order, as the
// JDK requires).
func (l *Integrity) Unwrap(tok []byte) ([]byte, error) {
	if len(tok) < 16 {
		return nil, errors.New("DIGEST-MD5: integrity token too short")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(tok) - 16
	msg, tag, typ, seq := tok[:n], tok[n:n+10], binary.BigEndian.Uint16(tok[n+10:]), binary.BigEndian.Uint32(tok[n+12:])
	if typ != 1 {
		return nil, fmt.Errorf("DIGEST-MD5: invalid message type %d", typ)
	}
	if seq != l.recvSeq {
		return nil, fmt.Errorf("DIGEST-MD5: out of order sequencing of messages from peer: got %d, expected %d", seq, l.recvSeq)
	}
	if !hmac.Equal(tag, mac(l.recvKey, seq, msg)) {
		return nil, errors.New("DIGEST-MD5: unmatched MACs")
	}
	l.recvSeq++
	return append([]byte(nil), msg...), nil
}
