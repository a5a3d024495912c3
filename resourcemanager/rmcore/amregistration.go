package rmcore

import (
	"crypto/rand"
	"time"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
)

// An AM's registration and unregistration (ApplicationMasterProtocol's register and
// finish): what they do to the attempt and its application. rmservice converts the
// messages.

// AMRegistration is what a registering AM is told besides the cluster's limits.
type AMRegistration struct {
	Queue     string
	ClientKey []byte // the attempt's client-to-AM master key (nil without Kerberos)
}

// RegisterAM registers att's AM: the attempt is RUNNING, and so is its application
// unless it ended meanwhile. An AM that registered already is refused, as is one whose
// attempt is unknown. constraints counts the placement constraints it registered with.
func (rm *Core) RegisterAM(att records.AttemptID, host string, rpcPort int32, trackingURL string, constraints []*yarnpb.PlacementConstraintMapEntryProto) (AMRegistration, error) {
	defer rm.recovery.admitAM()() // after a restart, the NodeManagers' registrations first
	byTag, err := rm.RegisterConstraints(att, constraints)
	if err != nil {
		return AMRegistration{}, err
	}
	var reg AMRegistration
	var rerr error
	// An AM registering again after a restart that resumed its registered attempt
	// changes nothing the store needs: the registration is written only the first time.
	// Unless it brings what the store lacks: a client-to-AM key made now (a cluster
	// kerberized across the restart), or an attempt that ended meanwhile.
	with := rm.apps.WithAttempt
	rm.apps.ViewAttempt(att, func(_ *rmstate.App, at *rmstate.Attempt) {
		if at.RegisteredBefore && !at.Ended() && (at.ClientKey != nil || !rm.settings.Kerberos) {
			with = rm.apps.RederiveAttempt
		}
	})
	found := with(att, func(a *rmstate.App, at *rmstate.Attempt) {
		if at.Registered {
			rerr = exceptions.Errorf(exceptions.InvalidAMRequest, "Application Master is already registered : %s", att.App)
			return
		}
		// No move once the attempt ended (killed, failed before its AM heard of it): the
		// Java RM ignores REGISTERED then, and the AM hears of the end in its next call.
		// An attempt that has not ended and cannot take it (its AM container not recorded)
		// is refused: registered, it could never unregister.
		if err := at.Move(rmstate.AttemptAMRegistered); err != nil && !at.Ended() {
			rerr = exceptions.Errorf(exceptions.InvalidAMRequest, "Application Master %s cannot register: %v", att, err)
			return
		}
		// On a kerberized cluster the AM authenticates its clients with client-to-AM
		// tokens the RM signs with a key of the attempt's (Java: only in secure mode).
		if rm.settings.Kerberos && at.ClientKey == nil {
			at.ClientKey = newClientKey()
		}
		if !at.Registered && at.AMContainer != nil {
			// ClusterMetrics' AMRegisterDelay: from the launch's answer to a launched AM's
			// first registration (none when the AM registered before the answer came).
			var d time.Duration
			if !at.LaunchedAt.IsZero() {
				d = max(rm.opts.Now().Sub(at.LaunchedAt), 0)
			}
			rm.metrics.AMRegisterDelay.Update(d)
		}
		at.Registered, at.RegisteredBefore, at.LastPing = true, false, rm.opts.Now()
		at.Host, at.RPCPort, at.TrackingURL = host, rpcPort, trackingURL
		at.LastResponse, at.LastResponseID, at.SpareResponse = nil, 0, nil
		// A registration (the first, or again after an RM restart) brings the AM's
		// constraints, and its client sends its pending SchedulingRequests anew.
		at.Constraints, at.SchedulingRequests = byTag, nil
		_ = a.Move(rmstate.AppAMRegistered) // no move once the application ended
		reg = AMRegistration{Queue: a.Queue, ClientKey: at.ClientKey}
	})
	if !found {
		return AMRegistration{}, attemptNotFound(att)
	}
	if rerr != nil {
		return AMRegistration{}, rerr
	}
	rm.log.WithFields(map[string]any{"application": att.App.String(), "attempt": att.String(), "host": host}).Info("application master registered")
	return reg, nil
}

// FinishAM unregisters att's AM with the application's outcome. The attempt is FINISHING
// until the AM container exits (an unmanaged AM has none: FINISHED now); the application
// is FINISHED to clients at once (protocol.md §4.2). unregistered is false while the
// state store has not taken the outcome: as the Java RM does until FINAL_SAVED, the AM
// asks again, so a restart cannot lose a finish it was told of.
func (rm *Core) FinishAM(att records.AttemptID, final yarnpb.FinalApplicationStatusProto, diagnostics, trackingURL string) (unregistered bool, err error) {
	var unmanaged, first bool
	now := rm.opts.Now().UnixMilli()
	found := rm.apps.WithAttempt(att, func(a *rmstate.App, at *rmstate.Attempt) {
		if !at.Registered {
			err = exceptions.Errorf(exceptions.AMNotRegistered, "Application Master is trying to unregister before registering for: %s", att)
			return
		}
		unmanaged = a.Unmanaged
		if at.Ended() && !at.Unregistered {
			// The attempt was killed or failed before its AM unregistered (it heard the
			// kill late): the Java RM ignores the call, and the attempt keeps its final
			// state and the RM's application page as tracking URL.
			return
		}
		if trackingURL != "" {
			at.TrackingURL = trackingURL
		}
		if at.Unregistered {
			return // a retried finish
		}
		if err = at.Move(rmstate.AttemptAMUnregistered); err != nil {
			err = exceptions.Errorf(exceptions.InvalidAMRequest, "Application Master %s cannot unregister: %v", att, err)
			return
		}
		at.Unregistered, at.LastPing, at.FinishTime = true, rm.opts.Now(), now
		if a.Unmanaged {
			_ = at.Move(rmstate.AttemptAMExited) // FINISHING: moved just above
		}
		if a.Move(rmstate.AppAMUnregistered) == nil {
			first = true
			a.FinishTime, a.Final, a.Diagnostics = now, final, diagnostics
		}
	})
	if !found {
		return false, attemptNotFound(att)
	}
	if err != nil {
		return false, err
	}
	if first {
		rm.AppEnded(att.App, yarnpb.YarnApplicationStateProto_FINISHED)
		if unmanaged {
			rm.EndApp(att.App)
		} else {
			// No more containers for it; those it has end with its AM container.
			rm.engine.CancelAsks(EngineID(att.App))
		}
	}
	log := rm.log.WithFields(map[string]any{"application": att.App.String(), "attempt": att.String(), "final_status": final.String()})
	if rm.apps.Unsaved(att.App) {
		// The state store refused the final state (full, read-only).
		if _, err := rm.apps.RetryUnsaved(); err != nil || rm.apps.Unsaved(att.App) {
			log.WithError(err).Warn("application master unregistering: its final state is not stored yet; answered isUnregistered=false")
			return false, nil
		}
	}
	log.Info("application master unregistered")
	return true, nil
}

// attemptNotFound is the error for a call of an attempt the RM does not hold.
func attemptNotFound(att records.AttemptID) error {
	return exceptions.Errorf(exceptions.ApplicationAttemptNotFound, "Application attempt %s doesn't exist in ApplicationMasterService cache.", att)
}

// newClientKey is an attempt's client-to-AM master key (Java makes 8-byte HmacSHA1 keys;
// the AM takes any length).
func newClientKey() []byte {
	b := make([]byte, 20)
	rand.Read(b) // never fails on Linux
	return b
}
