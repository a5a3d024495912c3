package haelector

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/bobbin-yarn/bobbin/internal/testutil"
	"github.com/bobbin-yarn/bobbin/internal/zktest"
)

// rmSide records one elector's transitions.
type rmSide struct {
	mu          sync.Mutex
	active      bool
	activations int
}

func (r *rmSide) callbacks() Callbacks {
	return Callbacks{
		BecomeActive: func() error {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.active = true
			r.activations++
			return nil
		},
		BecomeStandby: func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.active = false
		},
	}
}

func (r *rmSide) isActive() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.active
}

// Two RMs on a real ZooKeeper: exactly one is active; when it stops the other takes over;
// when ZooKeeper goes away the active steps down (no RM active without ZooKeeper), and
// when it comes back one RM is active again.
func TestElectionFailoverAndZooKeeperLoss(t *testing.T) {
	zks := zktest.Start(t)
	start := func(id string) (*Elector, *rmSide, context.CancelFunc, chan struct{}) {
		side := &rmSide{}
		e, err := New(Options{Servers: zks.Addr, BasePath: "/yarn-leader-election", ClusterID: "c1", ID: id, SessionTimeout: 2 * time.Second,
			RetryPause: 200 * time.Millisecond, Logger: testutil.QuietLogger()}, side.callbacks())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			e.Run(ctx)
		}()
		t.Cleanup(func() { cancel(); <-done })
		return e, side, cancel, done
	}
	e1, rm1, stop1, done1 := start("rm1")
	testutil.Eventually(t, 15*time.Second, "rm1 never became active", rm1.isActive)
	e2, rm2, _, _ := start("rm2")
	testutil.Eventually(t, 5*time.Second, "rm2 does not see rm1 as the leader", func() bool { return e2.Leader() == "rm1" })
	if rm2.isActive() || e2.Active() {
		t.Fatal("two RMs active")
	}
	stop1()
	<-done1
	if rm1.isActive() || e1.Active() {
		t.Fatal("a stopped elector left its RM active")
	}
	testutil.Eventually(t, 10*time.Second, "rm2 did not take over", rm2.isActive)

	// ZooKeeper goes away: the active steps down.
	zks.Stop()
	testutil.Eventually(t, 10*time.Second, "rm2 stayed active without ZooKeeper", func() bool { return !rm2.isActive() })
	zks.Restart()
	testutil.Eventually(t, 20*time.Second, "no RM active after ZooKeeper came back", rm2.isActive)
}

// An active elector is fresh only while ZooKeeper keeps confirming its lock: a process
// whose clock jumped past two thirds of the session timeout without a confirmation (it
// was paused) is not, until the next confirmation.
func TestFreshOnlyWhileConfirmed(t *testing.T) {
	zks := zktest.Start(t)
	clock := testutil.NewClock(time.Now())
	side := &rmSide{}
	e, err := New(Options{Servers: zks.Addr, BasePath: "/yarn-leader-election", ClusterID: "c1", ID: "rm1", SessionTimeout: 3 * time.Second,
		RetryPause: 200 * time.Millisecond, Logger: testutil.QuietLogger(), Now: clock.Now}, side.callbacks())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.Run(ctx)
	}()
	defer func() { cancel(); <-done }()
	testutil.Eventually(t, 15*time.Second, "never active", side.isActive)
	if !e.Fresh() {
		t.Fatal("just elected, not fresh")
	}
	clock.Advance(3 * time.Second) // as if paused past the session timeout
	if e.Fresh() {
		t.Fatal("fresh although ZooKeeper has not confirmed the lock for a whole session timeout")
	}
	testutil.Eventually(t, 5*time.Second, "ZooKeeper's next confirmation did not make it fresh again", e.Fresh)
}
