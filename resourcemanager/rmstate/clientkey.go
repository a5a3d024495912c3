package rmstate

import "github.com/bobbin-yarn/bobbin/records"

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
