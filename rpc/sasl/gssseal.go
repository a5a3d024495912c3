package sasl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/types"
)

// Wrap token flags (RFC 4121 §4.2.2).
const (
	flagSentByAcceptor = 0x01
	flagSealed         = 0x02
	flagAcceptorSubkey = 0x04
)

// seal makes a sealed (privacy) wrap token as the JDK sends them: EC 0, RRC 0, and the
// encrypted copy of the header identical to the outer one: header || E(confounder ||
// data || header) || HMAC (RFC 4121 §4.2.4, RFC 3961 encrypt with usage).
func seal(key types.EncryptionKey, flags byte, seq uint64, data []byte, usage uint32) ([]byte, error) {
	et, err := crypto.GetEtype(key.KeyType)
	if err != nil {
		return nil, err
	}
	hdr := make([]byte, 16)
	hdr[0], hdr[1], hdr[2], hdr[3] = 0x05, 0x04, flags|flagSealed, 0xFF
	binary.BigEndian.PutUint64(hdr[8:], seq)
	_, body, err := et.EncryptMessage(key.KeyValue, append(append([]byte(nil), data...), hdr...), usage)
	if err != nil {
		return nil, err
	}
	return append(hdr, body...), nil
}

// unseal opens a sealed wrap token: the flags must say who sent it, the rotation (RRC) is
// undone, the integrity of the encryption checked and the inner header compared with the
// outer one. It returns the data and the token's sequence number.
func unseal(key types.EncryptionKey, tok []byte, fromAcceptor bool, usage uint32) ([]byte, uint64, error) {
	et, err := crypto.GetEtype(key.KeyType)
	if err != nil {
		return nil, 0, err
	}
	if len(tok) < 16 || tok[0] != 0x05 || tok[1] != 0x04 || tok[3] != 0xFF {
		return nil, 0, errors.New("defective wrap token")
	}
	flags := tok[2]
	if flags&flagSealed == 0 {
		return nil, 0, errors.New("Privacy not protected")
	}
	if (flags&flagSentByAcceptor != 0) != fromAcceptor {
		return nil, 0, errors.New("wrap token sent by the wrong side")
	}
	ec := int(binary.BigEndian.Uint16(tok[4:6]))
	rrc := int(binary.BigEndian.Uint16(tok[6:8]))
	seq := binary.BigEndian.Uint64(tok[8:16])
	body := append([]byte(nil), tok[16:]...)
	min := et.GetConfounderByteSize() + et.GetHMACBitLength()/8 + 16 + ec
	if len(body) < min {
		return nil, 0, fmt.Errorf("sealed wrap token of %d bytes is too short", len(tok))
	}
	if rrc > 0 { // the sender rotated the body right by RRC bytes
		r := rrc % len(body)
		body = append(body[r:], body[:r]...)
	}
	plain, err := et.DecryptMessage(key.KeyValue, body, usage)
	if err != nil {
		return nil, 0, fmt.Errorf("sealed wrap token: %w", err)
	}
	if len(plain) < 16+ec {
		return nil, 0, errors.New("sealed wrap token without its header")
	}
	inner := plain[len(plain)-16:]
	outer := append([]byte(nil), tok[:16]...)
	outer[6], outer[7] = 0, 0
	if !bytes.Equal(inner, outer) {
		return nil, 0, errors.New("sealed wrap token: the encrypted header differs from the outer one")
	}
	return plain[:len(plain)-16-ec], seq, nil
}
