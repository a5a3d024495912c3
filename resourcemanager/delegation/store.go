package delegation

import (
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/resourcemanager/statestore"
)

// StorePersister keeps the manager's state in the RM's state store: one record per master
// key ("key-<id>") and token ("token-<seq>"), and the last sequence number ("seq").
type StorePersister struct {
	Store statestore.Store
	seq   int32
}

// NewStorePersister writes to store, whose last stored sequence number is seq.
func NewStorePersister(store statestore.Store, seq int32) *StorePersister {
	return &StorePersister{Store: store, seq: seq}
}

// StoreKey implements Persister.
func (p *StorePersister) StoreKey(k Key) error {
	return p.Store.PutDelegation(fmt.Sprintf("key-%d", k.ID), &statestore.DelegationRecord{KeyID: k.ID, Bytes: k.Bytes, ExpiryMs: k.Expiry.UnixMilli()})
}

// RemoveKey implements Persister.
func (p *StorePersister) RemoveKey(id int32) error {
	return p.Store.RemoveDelegation(fmt.Sprintf("key-%d", id))
}

// StoreToken implements Persister; it also moves the stored sequence number on, so a
// restarted RM never issues a sequence number twice.
func (p *StorePersister) StoreToken(t Stored) error {
	b, err := proto.Marshal(t.ID)
	if err != nil {
		return err
	}
	if seq := t.ID.GetSequenceNumber(); seq > p.seq {
		if err := p.Store.PutDelegation("seq", &statestore.DelegationRecord{Seq: seq}); err != nil {
			return err
		}
		p.seq = seq
	}
	return p.Store.PutDelegation(fmt.Sprintf("token-%d", t.ID.GetSequenceNumber()), &statestore.DelegationRecord{Identifier: b, RenewDateMs: t.RenewDate.UnixMilli()})
}

// RemoveToken implements Persister.
func (p *StorePersister) RemoveToken(seq int32) error {
	return p.Store.RemoveDelegation(fmt.Sprintf("token-%d", seq))
}

// StateFrom reads the manager's state out of what the store loaded.
func StateFrom(recs map[string]*statestore.DelegationRecord) (State, error) {
	var st State
	for name, r := range recs {
		switch {
		case name == "seq":
			st.Seq = max(st.Seq, r.Seq)
		case len(r.Identifier) > 0:
			var id yarnpb.YARNDelegationTokenIdentifierProto
			if err := proto.Unmarshal(r.Identifier, &id); err != nil {
				return State{}, fmt.Errorf("delegation record %s: %w", name, err)
			}
			st.Tokens = append(st.Tokens, Stored{ID: &id, RenewDate: time.UnixMilli(r.RenewDateMs)})
			st.Seq = max(st.Seq, id.GetSequenceNumber())
		case len(r.Bytes) > 0:
			st.Keys = append(st.Keys, Key{ID: r.KeyID, Bytes: r.Bytes, Expiry: time.UnixMilli(r.ExpiryMs)})
		default:
			return State{}, fmt.Errorf("delegation record %s: neither key, token nor sequence number", name)
		}
	}
	return st, nil
}
