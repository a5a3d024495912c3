package sasl

import (
	"crypto/cipher"
	"crypto/des"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rc4"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
)

// RFC 2831 §2.3 and §2.4 magic constants.
const (
	magicClientSign = "Digest session key to client-to-server signing key magic constant"
	magicServerSign = "Digest session key to server-to-client signing key magic constant"
	magicClientSeal = "Digest H(A1) to client-to-server sealing key magic constant"
	magicServerSeal = "Digest H(A1) to server-to-client sealing key magic constant"
)

// Ciphers of auth-conf in the JDK's preference order (its client picks the first the
// server lists, with the default strength "high,medium,low").
var digestCiphers = []string{"3des", "rc4", "des", "rc4-56", "rc4-40"}

// DigestLayer is DIGEST-MD5's security layer (RFC 2831 §2.3, §2.4), as the JDK's
// DigestIntegrity and DigestPrivacy run it. Integrity (auth-int): message || MAC ||
// 0x0001 || seq, MAC = HMAC-MD5(Ki, seq || message)[:10]. Privacy (auth-conf):
// E(Kc, message || padding || MAC) || 0x0001 || seq, the cipher's state (CBC chain or
// RC4 stream) running on from message to message in each direction. Sequence numbers
// start at 0 per direction.
type DigestLayer struct {
	mu               sync.Mutex
	sendKey, recvKey []byte // Ki
	sendSeq, recvSeq uint32
	// With privacy: the ciphers for each direction (block ones in CBC mode).
	encBlock, decBlock   cipher.BlockMode
	encStream, decStream cipher.Stream
}

// newDigestLayer keys a layer from H(A1); cipherName is "" for integrity.
func newDigestLayer(ha1 [16]byte, client bool, cipherName string) (*DigestLayer, error) {
	kic := md5.Sum(append(ha1[:], magicClientSign...))
	kis := md5.Sum(append(ha1[:], magicServerSign...))
	l := &DigestLayer{sendKey: kis[:], recvKey: kic[:]}
	if client {
		l.sendKey, l.recvKey = kic[:], kis[:]
	}
	if cipherName == "" {
		return l, nil
	}
	n := 16
	switch cipherName {
	case "rc4-56":
		n = 7
	case "rc4-40":
		n = 5
	}
	kcc := md5.Sum(append(append([]byte(nil), ha1[:n]...), magicClientSeal...))
	kcs := md5.Sum(append(append([]byte(nil), ha1[:n]...), magicServerSeal...))
	sendKc, recvKc := kcs[:], kcc[:]
	if client {
		sendKc, recvKc = kcc[:], kcs[:]
	}
	switch cipherName {
	case "rc4", "rc4-56", "rc4-40":
		enc, err := rc4.NewCipher(sendKc)
		if err != nil {
			return nil, err
		}
		dec, err := rc4.NewCipher(recvKc)
		if err != nil {
			return nil, err
		}
		l.encStream, l.decStream = enc, dec
	case "des", "3des":
		block := func(kc []byte) (cipher.Block, error) {
			if cipherName == "des" {
				return des.NewCipher(desKey(kc[0:7]))
			}
			k1, k2 := desKey(kc[0:7]), desKey(kc[7:14])
			return des.NewTripleDESCipher(append(append(append([]byte(nil), k1...), k2...), k1...))
		}
		eb, err := block(sendKc)
		if err != nil {
			return nil, err
		}
		db, err := block(recvKc)
		if err != nil {
			return nil, err
		}
		l.encBlock, l.decBlock = cipher.NewCBCEncrypter(eb, sendKc[8:16]), cipher.NewCBCDecrypter(db, recvKc[8:16])
	default:
		return nil, fmt.Errorf("DIGEST-MD5: unknown cipher %q", cipherName)
	}
	return l, nil
}

// desKey spreads 7 key bytes over 8, 7 bits each in the high bits (the JDK's
// addDesParity; Go's DES ignores the parity bit).
func desKey(k []byte) []byte {
	var v uint64
	for _, b := range k {
		v = v<<8 | uint64(b)
	}
	out := make([]byte, 8)
	for i := 0; i < 8; i++ {
		out[i] = byte(v>>(49-7*uint(i))) & 0x7f << 1
	}
	return out
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
func (l *DigestLayer) Wrap(p []byte) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := mac(l.sendKey, l.sendSeq, p)
	var out []byte
	switch {
	case l.encBlock != nil:
		pad := 8 - (len(p)+10)%8
		plain := make([]byte, 0, len(p)+pad+10)
		plain = append(plain, p...)
		for i := 0; i < pad; i++ {
			plain = append(plain, byte(pad))
		}
		plain = append(plain, m...)
		out = make([]byte, len(plain), len(plain)+6)
		l.encBlock.CryptBlocks(out, plain)
	case l.encStream != nil:
		plain := append(append([]byte(nil), p...), m...)
		out = make([]byte, len(plain), len(plain)+6)
		l.encStream.XORKeyStream(out, plain)
	default:
		out = append(append(make([]byte, 0, len(p)+16), p...), m...)
	}
	out = append(out, 0, 1)
	out = binary.BigEndian.AppendUint32(out, l.sendSeq)
	l.sendSeq++
	return out, nil
}

// Unwrap checks a peer's message: decrypted when private, then its MAC, type and
// sequence number (in order, as the JDK requires).
func (l *DigestLayer) Unwrap(tok []byte) ([]byte, error) {
	if len(tok) < 16 {
		return nil, errors.New("DIGEST-MD5: security layer token too short")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(tok) - 6
	typ, seq := binary.BigEndian.Uint16(tok[n:]), binary.BigEndian.Uint32(tok[n+2:])
	body := tok[:n]
	switch {
	case l.decBlock != nil:
		if len(body)%8 != 0 {
			return nil, errors.New("DIGEST-MD5: Illegal block sizes used with chosen cipher")
		}
		plain := make([]byte, len(body))
		l.decBlock.CryptBlocks(plain, body)
		pad := int(plain[len(plain)-11])
		if pad < 1 || pad > 8 || len(plain) < 10+pad {
			return nil, errors.New("DIGEST-MD5: bad padding")
		}
		body = append(plain[:len(plain)-10-pad:len(plain)-10-pad], plain[len(plain)-10:]...)
	case l.decStream != nil:
		plain := make([]byte, len(body))
		l.decStream.XORKeyStream(plain, body)
		body = plain
	}
	if len(body) < 10 {
		return nil, errors.New("DIGEST-MD5: security layer token too short")
	}
	msg, tag := body[:len(body)-10], body[len(body)-10:]
	if typ != 1 {
		return nil, fmt.Errorf("DIGEST-MD5: invalid message type: %d", typ)
	}
	if seq != l.recvSeq {
		return nil, fmt.Errorf("DIGEST-MD5: Out of order sequencing of messages from peer. Got: %d Expected: %d", seq, l.recvSeq)
	}
	if !hmac.Equal(tag, mac(l.recvKey, seq, msg)) {
		return nil, errors.New("DIGEST-MD5: unmatched MACs")
	}
	l.recvSeq++
	return append([]byte(nil), msg...), nil
}
