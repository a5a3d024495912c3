package statestore

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/rpc/writable"
)

// The Java RM's small records, the same bytes in its file and ZooKeeper stores: the
// store's version, the epoch, the AMRMToken secret manager's keys, and the delegation-token
// secret manager's master keys and tokens. p names where the bytes were read, for errors.

// versionBytes is a new store's version record (1.minor).
func versionBytes(minor int32) []byte {
	b, _ := proto.Marshal(&yarnpb.VersionProto{MajorVersion: proto.Int32(javaStoreMajor), MinorVersion: proto.Int32(minor)})
	return b
}

// checkVersion refuses a store whose version is not 1.x. A 1.x minor version is the Java
// RM's to keep (each writes its own on start; every 1.x reads every other).
func checkVersion(loc, p string, data []byte) error {
	var v yarnpb.VersionProto
	if err := proto.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("state store %s: %s is not a version record: %w", loc, p, err)
	}
	if v.GetMajorVersion() != javaStoreMajor {
		return fmt.Errorf("state store %s: version %d.%d (%s) is not one Bobbin reads (1.x): written by a newer ResourceManager; refusing to start rather than lose its applications",
			loc, v.GetMajorVersion(), v.GetMinorVersion(), p)
	}
	return nil
}

func epochBytes(next int64) []byte {
	b, _ := proto.Marshal(&yarnpb.EpochProto{Epoch: proto.Int64(next)})
	return b
}

func readEpochRecord(p string, data []byte) (int64, error) {
	var e yarnpb.EpochProto
	if err := proto.Unmarshal(data, &e); err != nil {
		return 0, fmt.Errorf("%s: not an EpochProto: %w", p, err)
	}
	return e.GetEpoch(), nil
}

// amrmStateBytes is the AMRMToken ring as the Java RM keeps it: its current and next keys.
func amrmStateBytes(keys *KeysRecord) []byte {
	k := &yarnpb.AMRMTokenSecretManagerStateProto{CurrentMasterKey: &yarnpb.MasterKeyProto{KeyId: proto.Int32(keys.Current.ID), Bytes: keys.Current.Bytes}}
	if keys.Next != nil {
		k.NextMasterKey = &yarnpb.MasterKeyProto{KeyId: proto.Int32(keys.Next.ID), Bytes: keys.Next.Bytes}
	}
	b, _ := proto.Marshal(k)
	return b
}

// readAMRMState is the key ring of the Java RM's AMRMToken state (nil without a current
// key).
func readAMRMState(p string, data []byte) (*KeysRecord, error) {
	var k yarnpb.AMRMTokenSecretManagerStateProto
	if err := proto.Unmarshal(data, &k); err != nil {
		return nil, fmt.Errorf("%s: not an AMRMTokenSecretManagerStateProto: %w", p, err)
	}
	if k.CurrentMasterKey == nil {
		return nil, nil
	}
	ring := &KeysRecord{Current: KeyRecord{ID: k.CurrentMasterKey.GetKeyId(), Bytes: k.CurrentMasterKey.GetBytes()}, LastID: k.CurrentMasterKey.GetKeyId()}
	if n := k.NextMasterKey; n != nil {
		ring.Next = &KeyRecord{ID: n.GetKeyId(), Bytes: n.GetBytes()}
		ring.LastID = max(ring.LastID, n.GetKeyId())
	}
	return ring, nil
}

// delegationKeyBytes is a DelegationKey's Writable: VInt id, VLong expiry, VInt length and
// the key.
func delegationKeyBytes(rec *DelegationRecord) []byte {
	b := writable.AppendVInt(nil, rec.KeyID)
	b = writable.AppendVLong(b, rec.ExpiryMs)
	b = writable.AppendVInt(b, int32(len(rec.Bytes)))
	return append(b, rec.Bytes...)
}

// readDelegationKey reads delegationKeyBytes.
func readDelegationKey(data []byte) (*DelegationRecord, error) {
	r := writable.NewReader(strings.NewReader(string(data)))
	id, err1 := r.VInt()
	expiry, err2 := r.VLong()
	key, err3 := r.Bytes(len(data))
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, fmt.Errorf("not a DelegationKey: %w", err)
	}
	return &DelegationRecord{KeyID: id, Bytes: key, ExpiryMs: expiry}, nil
}

// delegationTokenBytes is a token's RMDelegationTokenIdentifierDataProto, and its sequence
// number (which names its file or znode).
func delegationTokenBytes(rec *DelegationRecord) (int32, []byte, error) {
	var id yarnpb.YARNDelegationTokenIdentifierProto
	if err := proto.Unmarshal(rec.Identifier, &id); err != nil {
		return 0, nil, err
	}
	b, _ := proto.Marshal(&yarnpb.RMDelegationTokenIdentifierDataProto{TokenIdentifier: &id, RenewDate: proto.Int64(rec.RenewDateMs)})
	return id.GetSequenceNumber(), b, nil
}

// readDelegationToken reads delegationTokenBytes: the record and its name ("token-<seq>").
func readDelegationToken(p string, data []byte) (string, *DelegationRecord, error) {
	var d yarnpb.RMDelegationTokenIdentifierDataProto
	if err := proto.Unmarshal(data, &d); err != nil || d.TokenIdentifier == nil {
		return "", nil, fmt.Errorf("%s: not an RMDelegationTokenIdentifierData: %v", p, err)
	}
	ident, _ := proto.Marshal(d.TokenIdentifier)
	return "token-" + strconv.Itoa(int(d.TokenIdentifier.GetSequenceNumber())), &DelegationRecord{Identifier: ident, RenewDateMs: d.GetRenewDate()}, nil
}
