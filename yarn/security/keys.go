// Package security holds the YARN secret managers the RM and the NM share: master keys
// that roll, the three YARN tokens signed with them — AMRMTokens (application masters on
// the scheduler port), NMTokens (AMs and the RM on NodeManagers) and ContainerTokens (which
// container an NM may start) — and the keys a NodeManager holds. Passwords are
// HmacSHA1(master key, identifier bytes), as Hadoop's SecretManager.createPassword computes
// them, so Apache NodeManagers given the same master keys verify Bobbin's tokens.
package security

import (
	"crypto/rand"
	"fmt"
	"sync"

	"github.com/bobbin-yarn/bobbin/rpc/token"
)

// MasterKey is a secret key with the id tokens name it by (MasterKeyProto).
type MasterKey struct {
	ID    int32
	Bytes []byte
	// signer, when set, signs with Bytes reusing HMAC state (keys the ring made have one).
	signer *token.Signer
}

// Password is HmacSHA1(key, identifier).
func (m MasterKey) Password(identifier []byte) []byte {
	if m.signer != nil {
		return m.signer.Password(identifier)
	}
	return token.Password(m.Bytes, identifier)
}

// keyBytes is the size of generated keys. Java uses 8-byte HmacSHA1 keys; only the issuer
// and the NMs it shares keys with verify, so a longer key is safe and stronger.
const keyBytes = 20

func newKey(id int32) MasterKey {
	b := make([]byte, keyBytes)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err)) // the OS RNG does not fail on Linux
	}
	return MasterKey{ID: id, Bytes: b, signer: token.NewSigner(b)}
}

// KeyRing is a rolling set of master keys: tokens are signed with the current key and
// verified with the current, the next (during activation) or the previous one (until the
// tokens signed with it expire), as Hadoop's secret managers accept.
type KeyRing struct {
	mu       sync.RWMutex
	current  MasterKey
	next     *MasterKey
	previous *MasterKey
	lastID   int32
}

// NewKeyRing starts with one random key. firstID lets RMs pick disjoint key ids. When to
// roll is the owner's decision (Roll, then Activate).
func NewKeyRing(firstID int32) *KeyRing {
	return &KeyRing{lastID: firstID, current: newKey(firstID)}
}

// Current is the signing key.
func (k *KeyRing) Current() MasterKey {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.current
}

// Next is the key being activated, if a roll is under way.
func (k *KeyRing) Next() (MasterKey, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	if k.next == nil {
		return MasterKey{}, false
	}
	return *k.next, true
}

// Roll starts a key roll: a next key is created and handed out (to NMs, in AMRM
// responses) but not used for signing until Activate.
func (k *KeyRing) Roll() MasterKey {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.lastID++
	n := newKey(k.lastID)
	k.next = &n
	return n
}

// Activate makes the next key current; the old current key still verifies until the next
// roll.
func (k *KeyRing) Activate() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.next == nil {
		return
	}
	prev := k.current
	k.previous = &prev
	k.current = *k.next
	k.next = nil
}

// Sign returns HmacSHA1(current key, identifier) and the key's id.
func (k *KeyRing) Sign(identifier []byte) (password []byte, keyID int32) {
	cur := k.Current()
	return cur.Password(identifier), cur.ID
}

// Password recomputes the password of an identifier signed with key id, if the ring still
// holds that key.
func (k *KeyRing) Password(keyID int32, identifier []byte) ([]byte, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	for _, key := range []*MasterKey{&k.current, k.next, k.previous} {
		if key != nil && key.ID == keyID {
			return key.Password(identifier), true
		}
	}
	return nil, false
}

// RingState is a key ring's keys as the RM's state store keeps them, so tokens signed
// before a restart still verify after it.
type RingState struct {
	Current  MasterKey
	Next     *MasterKey
	Previous *MasterKey
	LastID   int32
}

// State is the ring's keys now.
func (k *KeyRing) State() RingState {
	k.mu.RLock()
	defer k.mu.RUnlock()
	st := RingState{Current: k.current, LastID: k.lastID}
	if k.next != nil {
		n := *k.next
		st.Next = &n
	}
	if k.previous != nil {
		p := *k.previous
		st.Previous = &p
	}
	return st
}

// RestoreKeyRing rebuilds a ring from its stored state.
func RestoreKeyRing(st RingState) (*KeyRing, error) {
	if len(st.Current.Bytes) == 0 {
		return nil, fmt.Errorf("key ring without a current key")
	}
	withSigner := func(m MasterKey) MasterKey {
		m.Bytes = append([]byte(nil), m.Bytes...)
		m.signer = token.NewSigner(m.Bytes)
		return m
	}
	k := &KeyRing{current: withSigner(st.Current), lastID: max(st.LastID, st.Current.ID)}
	if st.Next != nil {
		n := withSigner(*st.Next)
		k.next = &n
		k.lastID = max(k.lastID, n.ID)
	}
	if st.Previous != nil {
		p := withSigner(*st.Previous)
		k.previous = &p
	}
	return k, nil
}

// RollSaved is Roll for a ring that must survive restarts: the ring as it will be after
// the roll is given to save first, and the next key exists — is handed out, verifies —
// only if save succeeded, so no token is ever signed with a key a restart would lose.
func (k *KeyRing) RollSaved(save func(RingState) error) (MasterKey, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := newKey(k.lastID + 1)
	st := RingState{Current: k.current, Next: &n, Previous: k.previous, LastID: n.ID}
	if err := save(st); err != nil {
		return MasterKey{}, err
	}
	k.lastID, k.next = n.ID, &n
	return n, nil
}
