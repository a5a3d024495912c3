// Package delegation is the ResourceManager's delegation-token secret manager, as Hadoop's
// RMDelegationTokenSecretManager (an AbstractDelegationTokenSecretManager): it issues
// RM_DELEGATION_TOKENs whose identifier is YARNDelegationTokenIdentifierProto (owner,
// renewer, real user, issue and max dates, sequence number, master key id) and whose
// password is HmacSHA1(master key, identifier); it renews them up to their max date,
// cancels them, and verifies them for DIGEST-MD5 on the client port. Master keys roll every
// key-update interval and live as long as a token signed with them may. The clock is
// injected; the state (keys, tokens, sequence number) is what the RM's state store keeps.
package delegation

import (
	"crypto/hmac"
	"crypto/rand"
	"fmt"
	"sort"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/token"
)

// Kind is the token kind of RM delegation tokens.
const Kind = "RM_DELEGATION_TOKEN"

// Java exception classes of the refusals.
const (
	ClassInvalidToken  = rpc.ClassInvalidToken
	ClassAccessControl = rpc.ClassAccessControl
)

// Settings are the yarn.resourcemanager.delegation.* intervals.
type Settings struct {
	KeyUpdate     time.Duration // key.update-interval: how often the master key rolls
	RenewInterval time.Duration // token.renew-interval: how long a renewal lasts
	MaxLifetime   time.Duration // token.max-lifetime: no renewal goes past issue + this
}

// DefaultSettings are Hadoop's: a day, a day, a week.
var DefaultSettings = Settings{KeyUpdate: 24 * time.Hour, RenewInterval: 24 * time.Hour, MaxLifetime: 7 * 24 * time.Hour}

// Key is a master key and when it stops verifying.
type Key struct {
	ID     int32
	Bytes  []byte
	Expiry time.Time
}

// Stored is an issued token as the state store keeps it: the identifier and when it
// expires unless renewed.
type Stored struct {
	ID        *yarnpb.YARNDelegationTokenIdentifierProto
	RenewDate time.Time
}

// State is what survives an RM restart.
type State struct {
	Keys   []Key
	Tokens []Stored
	Seq    int32 // the last sequence number issued
}

// Persister records changes as they happen (the RM's state store); nil keeps nothing.
type Persister interface {
	StoreKey(Key) error
	RemoveKey(id int32) error
	StoreToken(Stored) error
	RemoveToken(seq int32) error
}

// Manager issues, renews, cancels and verifies RM delegation tokens.
type Manager struct {
	s       Settings
	now     func() time.Time
	short   func(principal string) (string, error)
	persist Persister

	mu      sync.Mutex
	keys    map[int32]Key
	current int32
	rolled  time.Time
	seq     int32
	tokens  map[int32]*entry
}

type entry struct {
	id        *yarnpb.YARNDelegationTokenIdentifierProto
	password  []byte
	renewDate time.Time
}

// New returns a manager with its first master key. shortName maps a principal to a user
// name (hadoop.security.auth_to_local; nil keeps names as they are).
func New(s Settings, now func() time.Time, shortName func(string) (string, error), p Persister) (*Manager, error) {
	if shortName == nil {
		shortName = func(n string) (string, error) { return n, nil }
	}
	m := &Manager{s: s, now: now, short: shortName, persist: p, keys: map[int32]Key{}, tokens: map[int32]*entry{}}
	if err := m.rollLocked(); err != nil {
		return nil, err
	}
	return m, nil
}

// Restore replaces the manager's state with a recovered one and rolls a fresh key for
// new tokens, as Java's secret manager does when it starts after recovery.
func (m *Manager) Restore(st State) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range st.Keys {
		m.keys[k.ID] = k
		if k.ID > m.current {
			m.current = k.ID
		}
	}
	if st.Seq > m.seq {
		m.seq = st.Seq
	}
	for _, t := range st.Tokens {
		k, ok := m.keys[t.ID.GetMasterKeyId()]
		if !ok {
			continue // its key is gone: the token can no longer be verified
		}
		b, err := proto.Marshal(t.ID)
		if err != nil {
			return err
		}
		m.tokens[t.ID.GetSequenceNumber()] = &entry{id: t.ID, password: token.Password(k.Bytes, b), renewDate: t.RenewDate}
	}
	return m.rollLocked()
}

// State is the manager's current keys and tokens (for a store that writes whole states).
func (m *Manager) State() State {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := State{Seq: m.seq}
	for _, k := range m.keys {
		st.Keys = append(st.Keys, k)
	}
	for _, e := range m.tokens {
		st.Tokens = append(st.Tokens, Stored{ID: e.id, RenewDate: e.renewDate})
	}
	sort.Slice(st.Keys, func(i, j int) bool { return st.Keys[i].ID < st.Keys[j].ID })
	sort.Slice(st.Tokens, func(i, j int) bool {
		return st.Tokens[i].ID.GetSequenceNumber() < st.Tokens[j].ID.GetSequenceNumber()
	})
	return st
}

func (m *Manager) rollLocked() error {
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		return fmt.Errorf("delegation: master key: %w", err)
	}
	now := m.now()
	k := Key{ID: m.current + 1, Bytes: b, Expiry: now.Add(m.s.KeyUpdate + m.s.MaxLifetime)}
	if m.persist != nil {
		if err := m.persist.StoreKey(k); err != nil {
			return fmt.Errorf("delegation: storing master key %d: %w", k.ID, err)
		}
	}
	m.keys[k.ID], m.current, m.rolled = k, k.ID, now
	return nil
}

// Tick rolls the master key when its interval has passed and drops expired keys and
// tokens (Java's ExpiredTokenRemover); the RM calls it periodically.
func (m *Manager) Tick() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	var errs []error
	if now.Sub(m.rolled) >= m.s.KeyUpdate {
		if err := m.rollLocked(); err != nil {
			errs = append(errs, err)
		}
	}
	for seq, e := range m.tokens {
		if now.After(e.renewDate) {
			delete(m.tokens, seq)
			if m.persist != nil {
				if err := m.persist.RemoveToken(seq); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	for id, k := range m.keys {
		if id != m.current && now.After(k.Expiry) {
			delete(m.keys, id)
			if m.persist != nil {
				if err := m.persist.RemoveKey(id); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("delegation: %v", errs)
	}
	return nil
}

// Issue makes a token for owner (the caller's full name), renewable by renewer (stored
// as its short name, as AbstractDelegationTokenIdentifier does), for realUser when the
// caller is a proxy. The service is left empty: the client fills in the RM's address.
func (m *Manager) Issue(owner, renewer, realUser string) (*commonpb.TokenProto, error) {
	if renewer != "" {
		short, err := m.short(renewer)
		if err != nil {
			return nil, rpc.Errorf(ClassAccessControl, "renewer %s: %v", renewer, err)
		}
		renewer = short
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	m.seq++
	id := &yarnpb.YARNDelegationTokenIdentifierProto{Owner: proto.String(owner), Renewer: proto.String(renewer), RealUser: proto.String(realUser),
		IssueDate: proto.Int64(now.UnixMilli()), MaxDate: proto.Int64(now.Add(m.s.MaxLifetime).UnixMilli()),
		SequenceNumber: proto.Int32(m.seq), MasterKeyId: proto.Int32(m.current)}
	b, err := proto.Marshal(id)
	if err != nil {
		return nil, err
	}
	e := &entry{id: id, password: token.Password(m.keys[m.current].Bytes, b), renewDate: minTime(now.Add(m.s.RenewInterval), millis(id.GetMaxDate()))}
	if m.persist != nil {
		if err := m.persist.StoreToken(Stored{ID: id, RenewDate: e.renewDate}); err != nil {
			m.seq--
			return nil, fmt.Errorf("delegation: storing token %d: %w", id.GetSequenceNumber(), err)
		}
	}
	m.tokens[m.seq] = e
	return &commonpb.TokenProto{Identifier: b, Password: e.password, Kind: proto.String(Kind), Service: proto.String("")}, nil
}

// Renew extends a token by the renew interval, never past its max date, for the caller
// whose short name is renewer; it returns the new expiry. Refusals carry Java's texts.
func (m *Manager) Renew(tok *commonpb.TokenProto, renewer string) (time.Time, error) {
	id, err := decode(tok)
	if err != nil {
		return time.Time{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if millis(id.GetMaxDate()).Before(now) {
		return time.Time{}, rpc.Errorf(ClassInvalidToken, "%s tried to renew an expired token", renewer)
	}
	if id.GetRenewer() == "" {
		return time.Time{}, rpc.Errorf(ClassAccessControl, "%s tried to renew a token without a renewer", renewer)
	}
	if id.GetRenewer() != renewer {
		return time.Time{}, rpc.Errorf(ClassAccessControl, "%s tries to renew a token with renewer %s", renewer, id.GetRenewer())
	}
	if _, ok := m.keys[id.GetMasterKeyId()]; !ok {
		return time.Time{}, rpc.Errorf(ClassInvalidToken, "Unable to find master key for keyId=%d from cache. Failed to renew an unexpired token with sequenceNumber=%d",
			id.GetMasterKeyId(), id.GetSequenceNumber())
	}
	e, ok := m.tokens[id.GetSequenceNumber()]
	if !ok || !proto.Equal(e.id, id) {
		return time.Time{}, rpc.Errorf(ClassInvalidToken, "Renewal request for unknown token")
	}
	if !hmac.Equal(e.password, tok.GetPassword()) {
		return time.Time{}, rpc.Errorf(ClassInvalidToken, "%s is trying to renew a token with wrong password", renewer)
	}
	renewDate := minTime(now.Add(m.s.RenewInterval), millis(id.GetMaxDate()))
	if m.persist != nil {
		if err := m.persist.StoreToken(Stored{ID: id, RenewDate: renewDate}); err != nil {
			return time.Time{}, fmt.Errorf("delegation: storing token %d: %w", id.GetSequenceNumber(), err)
		}
	}
	e.renewDate = renewDate
	return renewDate, nil
}

// Cancel removes a token, for its owner (canceller is the caller's full name) or its
// renewer (by short name).
func (m *Manager) Cancel(tok *commonpb.TokenProto, canceller string) error {
	id, err := decode(tok)
	if err != nil {
		return err
	}
	short, err := m.short(canceller)
	if err != nil {
		short = canceller
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.tokens[id.GetSequenceNumber()]
	if !ok || !proto.Equal(e.id, id) {
		return rpc.Errorf(ClassInvalidToken, "Token not found")
	}
	if canceller != id.GetOwner() && (id.GetRenewer() == "" || short != id.GetRenewer()) {
		return rpc.Errorf(ClassAccessControl, "%s is not authorized to cancel the token", canceller)
	}
	if m.persist != nil {
		if err := m.persist.RemoveToken(id.GetSequenceNumber()); err != nil {
			return fmt.Errorf("delegation: removing token %d: %w", id.GetSequenceNumber(), err)
		}
	}
	delete(m.tokens, id.GetSequenceNumber())
	return nil
}

// TokenKind implements rpc.SecretManager.
func (m *Manager) TokenKind() string { return Kind }

// holds is true when id is a token this manager issued and has not cancelled or expired.
func (m *Manager) holds(id *yarnpb.YARNDelegationTokenIdentifierProto) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.tokens[id.GetSequenceNumber()]
	return ok && proto.Equal(e.id, id)
}

// RetrievePassword implements rpc.SecretManager: the password of a live token; the
// connection's user is the owner's short name (Java's UGI from the identifier).
func (m *Manager) RetrievePassword(identifier []byte) ([]byte, string, error) {
	var id yarnpb.YARNDelegationTokenIdentifierProto
	if err := proto.Unmarshal(identifier, &id); err != nil {
		return nil, "", rpc.Errorf(ClassInvalidToken, "malformed RMDelegationTokenIdentifier: %v", err)
	}
	m.mu.Lock()
	e, ok := m.tokens[id.GetSequenceNumber()]
	now := m.now()
	m.mu.Unlock()
	if !ok || !proto.Equal(e.id, &id) {
		return nil, "", rpc.Errorf(ClassInvalidToken, "token (%s) can't be found in cache", describe(&id))
	}
	if now.After(e.renewDate) {
		return nil, "", rpc.Errorf(ClassInvalidToken, "token (%s) is expired, current time: %s expected renewal time: %s",
			describe(&id), now.Format("2006-01-02 15:04:05,000-0700"), e.renewDate.Format("2006-01-02 15:04:05,000-0700"))
	}
	user, err := m.short(id.GetOwner())
	if err != nil {
		return nil, "", rpc.Errorf(ClassInvalidToken, "token owner %s: %v", id.GetOwner(), err)
	}
	return e.password, user, nil
}

func decode(tok *commonpb.TokenProto) (*yarnpb.YARNDelegationTokenIdentifierProto, error) {
	if tok == nil {
		return nil, rpc.Errorf(ClassInvalidToken, "no token")
	}
	if k := tok.GetKind(); k != Kind {
		return nil, rpc.Errorf(ClassInvalidToken, "not an %s: kind %q", Kind, k)
	}
	var id yarnpb.YARNDelegationTokenIdentifierProto
	if err := proto.Unmarshal(tok.GetIdentifier(), &id); err != nil {
		return nil, rpc.Errorf(ClassInvalidToken, "malformed RMDelegationTokenIdentifier: %v", err)
	}
	return &id, nil
}

// describe is AbstractDelegationTokenIdentifier.toString.
func describe(id *yarnpb.YARNDelegationTokenIdentifierProto) string {
	return fmt.Sprintf("RM_DELEGATION_TOKEN owner=%s, renewer=%s, realUser=%s, issueDate=%d, maxDate=%d, sequenceNumber=%d, masterKeyId=%d",
		id.GetOwner(), id.GetRenewer(), id.GetRealUser(), id.GetIssueDate(), id.GetMaxDate(), id.GetSequenceNumber(), id.GetMasterKeyId())
}

func millis(ms int64) time.Time { return time.UnixMilli(ms) }

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
