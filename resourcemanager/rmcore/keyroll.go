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
}

func newKeyRoller(name string, ring *security.KeyRing, interval, activation time.Duration, now time.Time) *keyRoller {
	return &keyRoller{name: name, ring: ring, interval: interval, activation: activation, nextRoll: now.Add(interval)}
}

// tick rolls or activates when due and says which it did.
func (k *keyRoller) tick(now time.Time) (rolled, activated bool) {
	if !k.activateAt.IsZero() && !now.Before(k.activateAt) {
		k.ring.Activate()
		k.activateAt = time.Time{}
		activated = true
	}
	if k.interval > 0 && !now.Before(k.nextRoll) {
		k.ring.Roll()
		k.activateAt = now.Add(k.activation)
		k.nextRoll = now.Add(k.interval)
		rolled = true
	}
	return rolled, activated
}

// rollKeys advances every key roller (the monitor calls it on each tick).
func (rm *Core) rollKeys(now time.Time) {
	for _, k := range rm.rollers {
		rolled, activated := k.tick(now)
		if rolled || activated {
			// A rolled key is stored before it is handed out: a key a restart would lose must
			// never sign a token. If the store refuses it, the roll is undone and retried.
			if err := rm.saveKeys(k.name, k.ring); err != nil {
				rm.Log.WithError(err).WithField("key", k.name).Error("master key not stored")
				if rolled {
					k.ring.CancelRoll()
					k.activateAt = time.Time{}
					rolled = false
				}
			}
		}
		if rolled {
			next, _ := k.ring.Next()
			rm.Log.WithFields(map[string]any{"key": k.name, "key_id": next.ID}).Info("master key rolled; activating after the delay")
		}
		if activated && k.ring == rm.NMKeys {
			// AMs get NMTokens of the new key with their next containers on each node, as
			// the Java RM re-issues them after an activation.
			rm.Containers.ForgetNMTokens()
		}
		if activated {
			rm.Log.WithFields(map[string]any{"key": k.name, "key_id": k.ring.Current().ID}).Info("master key activated")
		}
	}
}
