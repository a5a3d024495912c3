package rmcore

import (
	"time"

	"github.com/bobbin-yarn/bobbin/yarn/security"
)

// keyRoller rolls one master key on a schedule, as the Java secret managers do: every
// interval a next key is made and handed out (NMs get it in heartbeats, AMs get tokens
// signed with it in allocate responses); activation later — 1.5 x the holders' liveness
// interval, when every live holder has it — it becomes the signing key.
type keyRoller struct {
	name       string
	ring       *security.KeyRing
	interval   time.Duration
	activation time.Duration
	nextRoll   time.Time
	activateAt time.Time // zero: no roll under way
	// save stores the ring as a roll will leave it (nil: nothing is stored); unsaved
	// says an activation is not stored yet, and is retried on every tick.
	save    func(security.RingState) error
	unsaved bool
}

// newKeyRoller starts a ring's schedule. A ring recovered in the middle of a roll (it has
// a next key) activates it one activation delay from now.
func newKeyRoller(name string, ring *security.KeyRing, interval, activation time.Duration, now time.Time) *keyRoller {
	k := &keyRoller{name: name, ring: ring, interval: interval, activation: activation, nextRoll: now.Add(interval)}
	if _, ok := ring.Next(); ok {
		k.activateAt = now.Add(activation)
	}
	return k
}

// tick rolls or activates when due and says which it did; a roll the store refused is
// tried again on the next tick.
func (k *keyRoller) tick(now time.Time) (rolled, activated bool, err error) {
	if !k.activateAt.IsZero() && !now.Before(k.activateAt) {
		k.ring.Activate()
		k.activateAt = time.Time{}
		activated, k.unsaved = true, k.save != nil
	}
	if k.unsaved {
		if err = k.save(k.ring.State()); err == nil {
			k.unsaved = false
		}
	}
	if k.interval > 0 && !now.Before(k.nextRoll) {
		save := k.save
		if save == nil {
			save = func(security.RingState) error { return nil }
		}
		if _, rerr := k.ring.RollSaved(save); rerr != nil {
			return rolled, activated, rerr
		}
		k.activateAt = now.Add(k.activation)
		k.nextRoll = now.Add(k.interval)
		rolled = true
	}
	return rolled, activated, err
}

// rollKeys advances every key roller (the monitor calls it on each tick).
func (rm *Core) rollKeys(now time.Time) {
	for _, k := range rm.rollers {
		rolled, activated, err := k.tick(now)
		if err != nil {
			rm.log.WithError(err).WithField("key", k.name).Error("master key not stored; trying again")
		}
		if rolled {
			next, _ := k.ring.Next()
			rm.log.WithFields(map[string]any{"key": k.name, "key_id": next.ID}).Info("master key rolled; activating after the delay")
		}
		if activated && k.ring == rm.nmKeys {
			// AMs get NMTokens of the new key with their next containers on each node, as
			// the Java RM re-issues them after an activation.
			rm.containers.ForgetNMTokens()
		}
		if activated {
			rm.log.WithFields(map[string]any{"key": k.name, "key_id": k.ring.Current().ID}).Info("master key activated")
		}
	}
}
