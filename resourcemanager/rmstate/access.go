package rmstate

// What access decisions read of an application: its owner, queue and ACLs, and the key
// its current attempt signs client-to-AM tokens with.

import (
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
)

// AccessOf is what an access decision on the application needs: its owner, its queue and
// the ACLs its submission set per access type (ContainerLaunchContext.application_ACLs).
func (r *Apps) AccessOf(id records.ApplicationID) (owner, queue string, acls map[yarnpb.ApplicationAccessTypeProto]string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.apps[id]
	if !ok {
		return "", "", nil, false
	}
	for _, e := range a.AMSpec.GetApplication_ACLs() {
		if acls == nil {
			acls = map[yarnpb.ApplicationAccessTypeProto]string{}
		}
		acls[e.GetAccessType()] = e.GetAcl()
	}
	return a.User, a.Queue, acls, true
}

// ClientKey is the client-to-AM master key of application id's current attempt (nil when
// it has none: no attempt, not registered, or no Kerberos).
func (r *Apps) ClientKey(id records.ApplicationID) (records.AttemptID, []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.apps[id]
	if !ok || a.Attempt == nil || a.Finished() {
		return records.AttemptID{}, nil
	}
	return a.Attempt.ID, a.Attempt.ClientKey
}
