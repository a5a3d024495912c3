package security

import (
	"errors"
	"fmt"
	"sync"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/token"
)

// AMRMTokens issues and verifies AMRMTokens. It is the rpc.SecretManager of the
// scheduler port: the attempt a connection speaks for comes only from its token.
type AMRMTokens struct {
	Keys *KeyRing
	mu   sync.RWMutex
	live map[records.AttemptID]bool
}

// NewAMRMTokens returns a manager with its own key ring.
func NewAMRMTokens(keys *KeyRing) *AMRMTokens {
	return &AMRMTokens{Keys: keys, live: map[records.AttemptID]bool{}}
}

// Issue creates the token for an attempt (kind YARN_AM_RM_TOKEN, empty service: the AM
// sets the service itself) and marks the attempt live.
func (m *AMRMTokens) Issue(att records.AttemptID) (*token.Token, error) {
	cur := m.Keys.Current()
	id, err := proto.Marshal(&yarnpb.AMRMTokenIdentifierProto{AppAttemptId: att.Proto(), KeyId: proto.Int32(cur.ID)})
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.live[att] = true
	m.mu.Unlock()
	return &token.Token{Identifier: id, Password: cur.Password(id), Kind: token.KindAMRM}, nil
}

// IssueNext creates a token for att signed with the ring's next key, while a roll is under
// way and keyID (the key of the token the AM holds) is not that key already; the AM
// receives it in AllocateResponse.am_rm_token.
func (m *AMRMTokens) IssueNext(att records.AttemptID, keyID int32) (*token.Token, bool) {
	next, ok := m.Keys.Next()
	if !ok || next.ID == keyID {
		return nil, false
	}
	id, err := proto.Marshal(&yarnpb.AMRMTokenIdentifierProto{AppAttemptId: att.Proto(), KeyId: proto.Int32(next.ID)})
	if err != nil {
		return nil, false
	}
	return &token.Token{Identifier: id, Password: next.Password(id), Kind: token.KindAMRM}, true
}

// KeyIDOf decodes the master key id an AMRMToken identifier names.
func KeyIDOf(identifier []byte) int32 {
	var id yarnpb.AMRMTokenIdentifierProto
	if proto.Unmarshal(identifier, &id) != nil {
		return 0
	}
	return id.GetKeyId()
}

// Recover marks live an attempt whose AM kept running across an RM restart: the token it
// holds, signed with a recovered key, authenticates again.
func (m *AMRMTokens) Recover(att records.AttemptID) {
	m.mu.Lock()
	m.live[att] = true
	m.mu.Unlock()
}

// Revoke stops an attempt's token from authenticating (the attempt ended).
func (m *AMRMTokens) Revoke(att records.AttemptID) {
	m.mu.Lock()
	delete(m.live, att)
	m.mu.Unlock()
}

// TokenKind implements rpc.SecretManager.
func (m *AMRMTokens) TokenKind() string { return token.KindAMRM }

// RetrievePassword implements rpc.SecretManager: the password for a live attempt's
// identifier, signed with a key the ring still holds; the user is the attempt id.
func (m *AMRMTokens) RetrievePassword(identifier []byte) ([]byte, string, error) {
	var id yarnpb.AMRMTokenIdentifierProto
	if err := proto.Unmarshal(identifier, &id); err != nil || id.AppAttemptId == nil {
		return nil, "", invalid("malformed AMRMTokenIdentifier")
	}
	att := records.AttemptIDFromProto(id.AppAttemptId)
	m.mu.RLock()
	live := m.live[att]
	m.mu.RUnlock()
	if !live {
		return nil, "", invalid("appattempt %s not found in AMRMTokenSecretManager", att)
	}
	pw, ok := m.Keys.Password(id.GetKeyId(), identifier)
	if !ok {
		return nil, "", invalid("AMRMToken for %s was signed with unknown key %d", att, id.GetKeyId())
	}
	return pw, att.String(), nil
}

// AttemptOf decodes the attempt an AMRMToken identifier names (for the AM service, which
// reads it from the caller's token).
func AttemptOf(identifier []byte) (records.AttemptID, error) {
	var id yarnpb.AMRMTokenIdentifierProto
	if err := proto.Unmarshal(identifier, &id); err != nil || id.AppAttemptId == nil {
		return records.AttemptID{}, errors.New("malformed AMRMTokenIdentifier")
	}
	return records.AttemptIDFromProto(id.AppAttemptId), nil
}

// NMTokens issues NMTokens for (attempt, node) with the NM-token master key that the RM
// shares with every NodeManager; an NM verifies them with the same key (NMVerifier).
type NMTokens struct{ Keys *KeyRing }

// Issue creates the NMToken an AM presents to the NM at node ("host:port").
func (m NMTokens) Issue(att records.AttemptID, node *yarnpb.NodeIdProto, submitter string) (*token.Token, error) {
	cur := m.Keys.Current()
	id, err := proto.Marshal(&yarnpb.NMTokenIdentifierProto{AppAttemptId: att.Proto(), NodeId: node, AppSubmitter: proto.String(submitter), KeyId: proto.Int32(cur.ID)})
	if err != nil {
		return nil, err
	}
	return &token.Token{Identifier: id, Password: cur.Password(id), Kind: token.KindNM,
		Service: fmt.Sprintf("%s:%d", node.GetHost(), node.GetPort())}, nil
}

// ContainerTokens issues ContainerTokens: which container an NM may start, for whom, with
// what resource, until when.
type ContainerTokens struct {
	Keys         *KeyRing
	RMIdentifier int64 // the RM's start time; NMs refuse tokens of a previous RM
}

// Issue signs a container token identifier (the caller fills containerId, nmHostAddr,
// appSubmitter, resource, expiryTimeStamp, priority, creationTime).
func (m ContainerTokens) Issue(id *yarnpb.ContainerTokenIdentifierProto) (*token.Token, error) {
	cur := m.Keys.Current()
	id.MasterKeyId = proto.Int32(cur.ID)
	id.RmIdentifier = proto.Int64(m.RMIdentifier)
	b, err := proto.Marshal(id)
	if err != nil {
		return nil, err
	}
	return &token.Token{Identifier: b, Password: cur.Password(b), Kind: token.KindContainer, Service: id.GetNmHostAddr()}, nil
}

// NMVerifier is a NodeManager's rpc.SecretManager for NMTokens, holding the master keys
// the RM sent in registerNodeManager / nodeHeartbeat.
type NMVerifier struct {
	mu   sync.RWMutex
	keys map[int32][]byte
}

// SetKeys replaces the known keys (current and previous from the RM).
func (v *NMVerifier) SetKeys(keys ...MasterKey) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.keys = map[int32][]byte{}
	for _, k := range keys {
		v.keys[k.ID] = k.Bytes
	}
}

// TokenKind implements rpc.SecretManager.
func (v *NMVerifier) TokenKind() string { return token.KindNM }

// RetrievePassword implements rpc.SecretManager; the user is the attempt id.
func (v *NMVerifier) RetrievePassword(identifier []byte) ([]byte, string, error) {
	var id yarnpb.NMTokenIdentifierProto
	if err := proto.Unmarshal(identifier, &id); err != nil || id.AppAttemptId == nil {
		return nil, "", invalid("malformed NMTokenIdentifier")
	}
	v.mu.RLock()
	key, ok := v.keys[id.GetKeyId()]
	v.mu.RUnlock()
	if !ok {
		return nil, "", invalid("NMToken signed with unknown key %d", id.GetKeyId())
	}
	return token.Password(key, identifier), records.AttemptIDFromProto(id.AppAttemptId).String(), nil
}

func invalid(format string, args ...any) error {
	return rpc.Errorf(rpc.ClassInvalidToken, format, args...)
}
