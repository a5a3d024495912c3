package rmcore

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// monitor runs the RM's clocks until ctx ends: NodeManager, AM and allocation expiry, and
// metrics of the engine's state about once a second.
func (rm *Core) monitor(ctx context.Context) {
	t := time.NewTicker(rm.settings.monitorTick())
	defer t.Stop()
	var lastStats time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := rm.opts.Now()
		rm.Step(now)
		if now.Sub(lastStats) >= time.Second {
			lastStats = now
			rm.metrics.observe(rm.engine.Stats())
		}
	}
}

// Step runs the RM's clocks once at now: NodeManager liveness, AM liveness, unused
// allocations, application lifetimes, graceful decommissions and master-key rolls. The
// monitor calls it on every tick; tests with an injected clock call it directly.
func (rm *Core) Step(now time.Time) {
	rm.stepMu.Lock() // the key rollers' schedules are the monitor's own state
	defer rm.stepMu.Unlock()
	for _, key := range rm.nodes.Expire(now, rm.settings.NMExpiry) {
		rm.log.WithField("node", key).Warn("NodeManager expired: no heartbeat within yarn.nm.liveness-monitor.expiry-interval-ms; node is LOST")
		rm.NodeLost(key, "Container released on a *lost* node")
	}
	if _, opened := rm.schedulingOpen(now); opened {
		rm.KickScheduler() // the first pass after a restart's wait need not wait for a tick
	}
	rm.expireAttempts(now)
	rm.expireAllocations(now)
	rm.expireLifetimes(now)
	rm.checkDecommissioning(now)
	rm.rollKeys(now)
	if now.Sub(rm.retryTick) >= time.Second {
		rm.retryTick = now
		rm.retryUnsaved()
	}
	if now.Sub(rm.delegTick) >= 10*time.Second {
		rm.delegTick = now
		if err := rm.delegation.Tick(); err != nil {
			rm.log.WithError(err).Warn("delegation tokens: expiring and rolling keys")
		}
	}
}

// expireLifetimes kills the applications whose lifetime has passed, as 3.1.1's
// RMAppLifetimeMonitor does.
func (rm *Core) expireLifetimes(now time.Time) {
	var due []records.ApplicationID
	rm.apps.Each(func(a *rmstate.App) {
		if exp, ok := a.Timeouts[yarnpb.ApplicationTimeoutTypeProto_APP_TIMEOUT_LIFETIME]; ok && !a.Finished() && now.UnixMilli() >= exp {
			due = append(due, a.ID)
		}
	})
	for _, id := range due {
		const why = "Application is killed by ResourceManager as it has exceeded the lifetime period."
		if killed, _ := rm.apps.Kill(id, now.UnixMilli(), why); killed {
			rm.AppEnded(id, yarnpb.YarnApplicationStateProto_KILLED)
			rm.EndApp(id)
			rm.log.WithField("application", id.String()).Info("application killed: lifetime exceeded")
		}
	}
}

// expireAttempts fails the attempts whose AM has been silent longer than
// yarn.am.liveness-monitor.expiry-interval-ms, and ends applications whose AM
// unregistered but whose AM container has not exited within that time.
func (rm *Core) expireAttempts(now time.Time) {
	type expired struct {
		att          records.AttemptID
		unregistered bool
	}
	var out []expired
	rm.apps.Each(func(a *rmstate.App) {
		at := a.Attempt
		if at == nil || at.Ended() || at.LastPing.IsZero() || now.Sub(at.LastPing) <= rm.settings.AMExpiry {
			return
		}
		if at.Unregistered {
			if !a.Unmanaged {
				out = append(out, expired{at.ID, true})
			}
			return
		}
		if !a.Finished() {
			out = append(out, expired{at.ID, false})
		}
	})
	for _, e := range out {
		if e.unregistered {
			rm.log.WithFields(map[string]any{"application": e.att.App.String(), "attempt": e.att.String()}).Warn("AM container did not exit after unregistering; killing it")
			rm.apps.WithAttempt(e.att, func(a *rmstate.App, at *rmstate.Attempt) {
				if at.Move(rmstate.AttemptAMExited) == nil {
					at.FinishTime = now.UnixMilli()
				}
			})
			rm.EndApp(e.att.App)
			continue
		}
		rm.AttemptFailed(e.att, fmt.Sprintf("ApplicationMaster for attempt %s timed out", e.att), exitcode.Invalid)
	}
}

// expireAllocations takes back containers handed to an AM that their NodeManager has not
// reported within yarn.resourcemanager.rm.container-allocation.expiry-interval-ms.
func (rm *Core) expireAllocations(now time.Time) {
	t := rm.containers
	due := t.UnstartedSince(now.Add(-rm.settings.AllocationExpiry))
	for _, c := range due {
		c2, final, fresh := t.Complete(c.ID, &yarnpb.ContainerStatusProto{ContainerId: c.ID.Proto(), State: yarnpb.ContainerStateProto_C_COMPLETE.Enum(),
			ExitStatus: proto.Int32(exitcode.Aborted), Diagnostics: proto.String("Container expired since it was unused")})
		if !fresh {
			continue
		}
		rm.engine.Release(c2.EngineID)
		t.KillOnNode(c2.Node(), c2.ID.Proto())
		rm.metrics.containerExpired()
		rm.log.WithFields(map[string]any{"container": c2.ID.String(), "node": c2.Node(), "attempt": c2.ID.Attempt.String()}).Warn("container expired since it was unused")
		if c2.AM {
			rm.amExited(c2.ID, final)
		}
		rm.KickScheduler()
	}
}

// monitorTick is how often the liveness monitor looks: a tenth of the shortest expiry,
// between 10 ms and 1 s.
func (s Settings) monitorTick() time.Duration {
	tick := min(s.NMExpiry, s.AMExpiry, s.AllocationExpiry) / 10
	return min(max(tick, 10*time.Millisecond), time.Second)
}

// retryUnsaved writes again the application records the state store refused (a full or
// read-only file system): once it takes writes again, what it missed is stored. The
// failures were logged when they happened; a retry that stores is logged once.
func (rm *Core) retryUnsaved() {
	if n, err := rm.apps.RetryUnsaved(); n > 0 {
		l := rm.log.WithFields(map[string]any{"stored": n, "store": rm.store.Location()})
		if err != nil {
			l = l.WithError(err)
		}
		l.Info("state store takes writes again: stored what it had refused")
	}
}
