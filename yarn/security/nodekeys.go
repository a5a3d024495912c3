package security

import (
	"sync"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
)

// NodeKeys are the master keys a NodeManager holds, as the RM hands them out in the
// registration and heartbeat answers: the container-token key (to check the container
// tokens in startContainers) and the NM-token key (to check the NMTokens AMs connect with).
// Of each it keeps the current and the previous key, as the Java NodeManager does, so
// tokens signed just before a roll still verify. Bobbin's NodeManager and the simulated
// NodeManagers of nmsim share it. Safe for concurrent use.
type NodeKeys struct {
	nm *NMVerifier

	mu        sync.Mutex
	container map[int32][]byte
	lastC     *MasterKey
	lastNM    *MasterKey
	prevC     *MasterKey
	prevNM    *MasterKey
}

// NewNodeKeys holds no key yet: every token is refused until the first Update.
func NewNodeKeys() *NodeKeys {
	return &NodeKeys{nm: &NMVerifier{}, container: map[int32][]byte{}}
}

// Update takes the keys of a registration or heartbeat answer (nil: unchanged); it
// reports whether the keys held changed.
func (k *NodeKeys) Update(containerKey, nmKey *yarnpb.MasterKeyProto) (changed bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if containerKey != nil && (k.lastC == nil || k.lastC.ID != containerKey.GetKeyId()) {
		k.prevC, k.lastC = k.lastC, &MasterKey{ID: containerKey.GetKeyId(), Bytes: containerKey.GetBytes()}
		changed = true
	}
	if nmKey != nil && (k.lastNM == nil || k.lastNM.ID != nmKey.GetKeyId()) {
		k.prevNM, k.lastNM = k.lastNM, &MasterKey{ID: nmKey.GetKeyId(), Bytes: nmKey.GetBytes()}
		changed = true
	}
	if changed {
		k.applyLocked()
	}
	return changed
}

// applyLocked makes the held keys the ones tokens are checked with.
func (k *NodeKeys) applyLocked() {
	k.container = map[int32][]byte{}
	var nm []MasterKey
	for _, mk := range []*MasterKey{k.prevC, k.lastC} {
		if mk != nil {
			k.container[mk.ID] = mk.Bytes
		}
	}
	for _, mk := range []*MasterKey{k.lastNM, k.prevNM} {
		if mk != nil {
			nm = append(nm, *mk)
		}
	}
	k.nm.SetKeys(nm...)
}

// Held are the keys held, of each kind the current one first and then the previous
// one (for a NodeManager's recovery store).
func (k *NodeKeys) Held() (container, nm []MasterKey) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, mk := range []*MasterKey{k.lastC, k.prevC} {
		if mk != nil {
			container = append(container, *mk)
		}
	}
	for _, mk := range []*MasterKey{k.lastNM, k.prevNM} {
		if mk != nil {
			nm = append(nm, *mk)
		}
	}
	return container, nm
}

// Restore takes back keys Held returned (a NodeManager restarting): tokens the RM
// signed before the restart verify again, as they did.
func (k *NodeKeys) Restore(container, nm []MasterKey) {
	k.mu.Lock()
	defer k.mu.Unlock()
	at := func(keys []MasterKey, i int) *MasterKey {
		if i < len(keys) {
			mk := keys[i]
			return &mk
		}
		return nil
	}
	k.lastC, k.prevC = at(container, 0), at(container, 1)
	k.lastNM, k.prevNM = at(nm, 0), at(nm, 1)
	k.applyLocked()
}

// LastKnown are the newest keys held, for a heartbeat's last_known_*_master_key fields
// (nil before the first Update), so the RM sends only keys the node lacks.
func (k *NodeKeys) LastKnown() (containerKey, nmKey *yarnpb.MasterKeyProto) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.lastC != nil {
		containerKey = &yarnpb.MasterKeyProto{KeyId: proto.Int32(k.lastC.ID), Bytes: k.lastC.Bytes}
	}
	if k.lastNM != nil {
		nmKey = &yarnpb.MasterKeyProto{KeyId: proto.Int32(k.lastNM.ID), Bytes: k.lastNM.Bytes}
	}
	return containerKey, nmKey
}

// ContainerKey is the container-token master key of this id, if held.
func (k *NodeKeys) ContainerKey(id int32) ([]byte, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	b, ok := k.container[id]
	return b, ok
}

// NMTokens is the rpc.SecretManager that checks NMTokens with the held NM-token keys.
func (k *NodeKeys) NMTokens() *NMVerifier { return k.nm }
