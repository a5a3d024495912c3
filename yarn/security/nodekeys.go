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
}

// NewNodeKeys holds no key yet: every token is refused until the first Update.
func NewNodeKeys() *NodeKeys {
	return &NodeKeys{nm: &NMVerifier{}, container: map[int32][]byte{}}
}

// Update takes the keys of a registration or heartbeat answer (nil: unchanged).
func (k *NodeKeys) Update(containerKey, nmKey *yarnpb.MasterKeyProto) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if containerKey != nil && (k.lastC == nil || k.lastC.ID != containerKey.GetKeyId()) {
		keep := map[int32][]byte{containerKey.GetKeyId(): containerKey.GetBytes()}
		if k.lastC != nil {
			keep[k.lastC.ID] = k.lastC.Bytes
		}
		k.container = keep
		k.lastC = &MasterKey{ID: containerKey.GetKeyId(), Bytes: containerKey.GetBytes()}
	}
	if nmKey != nil && (k.lastNM == nil || k.lastNM.ID != nmKey.GetKeyId()) {
		keys := []MasterKey{{ID: nmKey.GetKeyId(), Bytes: nmKey.GetBytes()}}
		if k.lastNM != nil {
			keys = append(keys, *k.lastNM)
		}
		k.nm.SetKeys(keys...)
		k.lastNM = &MasterKey{ID: nmKey.GetKeyId(), Bytes: nmKey.GetBytes()}
	}
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
