// Package haelector elects the active ResourceManager among RMs in high availability, in
// ZooKeeper, as Hadoop's ActiveStandbyElector does: whoever creates the ephemeral lock
// znode (<zk-base-path>/<cluster-id>/ActiveStandbyElectorLock) is active; the others watch
// it and try again when it goes. The lock lives as long as its holder's ZooKeeper session,
// so an RM that dies, hangs past the session timeout or loses ZooKeeper loses it.
//
// An active RM that loses its connection to ZooKeeper steps down at once — it can no
// longer know it still holds the lock — and takes the lock up again only if its session
// survived (the lock is still its own). There is never a moment when two RMs both
// believe they are active by this elector; the state store's fence covers the RM that has
// not heard yet (a paused process).
package haelector

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/sirupsen/logrus"
)

// LockName is the lock znode's name, as Hadoop's.
const LockName = "ActiveStandbyElectorLock"

// Callbacks are what the elector's owner does on a change of role. BecomeActive may fail
// (the RM could not start its active services): the elector then gives the lock up and
// tries again after a pause, so another RM can take it.
type Callbacks struct {
	BecomeActive  func() error
	BecomeStandby func()
}

// Options configure an Elector.
type Options struct {
	Servers        string // the quorum, "host:port,host:port"
	BasePath       string // yarn.resourcemanager.ha.automatic-failover.zk-base-path
	ClusterID      string // yarn.resourcemanager.cluster-id
	ID             string // this RM's id (yarn.resourcemanager.ha.id)
	SessionTimeout time.Duration
	// RetryPause is the wait after a failed activation or a lost connection attempt.
	RetryPause time.Duration
	// Now is the clock (time.Now by default).
	Now    func() time.Time
	Logger *logrus.Entry
}

// Elector runs one RM's side of the election.
type Elector struct {
	opts     Options
	lockPath string
	cb       Callbacks
	log      *logrus.Entry

	mu     sync.Mutex
	active bool
	leader string // the lock's holder as last seen ("" unknown)
	// rejoin asks the session loop to give the lock up and stand again later (Rejoin).
	rejoin chan struct{}
	// confirmed is when ZooKeeper last confirmed this RM holds the lock.
	confirmed time.Time
}

// Fresh reports whether this RM holds the lock and ZooKeeper confirmed it within two
// thirds of the session timeout. An active RM answers nothing unless it is fresh: a
// process that was paused (SIGSTOP) past its session timeout wakes up believing it is
// active until its ZooKeeper client hears otherwise, and must not serve meanwhile.
func (e *Elector) Fresh() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return !e.confirmed.IsZero() && e.opts.Now().Sub(e.confirmed) < e.opts.SessionTimeout*2/3
}

func (e *Elector) confirm(at time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.confirmed = at
}

// New returns an elector; Run takes part in the election.
func New(opts Options, cb Callbacks) (*Elector, error) {
	if opts.Servers == "" || opts.ClusterID == "" || opts.ID == "" {
		return nil, errors.New("haelector: the ZooKeeper quorum, the cluster id and the RM id are all needed")
	}
	if opts.SessionTimeout <= 0 {
		opts.SessionTimeout = 10 * time.Second
	}
	if opts.RetryPause <= 0 {
		opts.RetryPause = time.Second
	}
	if opts.Logger == nil {
		opts.Logger = logrus.NewEntry(logrus.StandardLogger())
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Elector{opts: opts, cb: cb, lockPath: path.Join(opts.BasePath, opts.ClusterID, LockName), rejoin: make(chan struct{}, 1),
		log: opts.Logger.WithFields(logrus.Fields{"component": "elector", "rm_id": opts.ID})}, nil
}

// Rejoin gives the lock up, if this RM holds it, and stands for election again after a
// pause, so another RM can win meanwhile: an administrator moved this RM to standby by
// hand (a forced transitionToStandby under automatic failover), and without giving the
// lock up no RM would be active.
func (e *Elector) Rejoin() {
	select {
	case e.rejoin <- struct{}{}:
	default:
	}
}

// Active reports whether this RM holds the lock.
func (e *Elector) Active() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.active
}

// Leader is the id of the RM that holds the lock, as this RM last saw it ("" unknown).
func (e *Elector) Leader() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.leader
}

func (e *Elector) setActive(active bool) {
	e.mu.Lock()
	was := e.active
	e.active = active
	if !active {
		e.confirmed = time.Time{}
	}
	if active {
		e.leader = e.opts.ID
	}
	e.mu.Unlock()
	switch {
	case active && !was:
		// BecomeActive runs in the caller (elect) so its error can give the lock up.
	case !active && was:
		e.log.Warn("stepping down to standby")
		e.cb.BecomeStandby()
	}
}

// Run takes part in the election until ctx ends; a standby RM on return.
func (e *Elector) Run(ctx context.Context) {
	defer e.setActive(false)
	for ctx.Err() == nil {
		e.session(ctx)
		select {
		case <-ctx.Done():
		case <-time.After(e.opts.RetryPause):
		}
	}
}

// session runs one ZooKeeper session: it returns when the session expires or ctx ends.
func (e *Elector) session(ctx context.Context) {
	servers := strings.Split(e.opts.Servers, ",")
	for i := range servers {
		servers[i] = strings.TrimSpace(servers[i])
	}
	conn, events, err := zk.Connect(servers, e.opts.SessionTimeout, zk.WithLogger(zkLogger{e.log}))
	if err != nil {
		e.log.WithError(err).Warn("cannot connect to ZooKeeper")
		return
	}
	defer conn.Close()
	var watch <-chan zk.Event
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	// While active, ZooKeeper is asked every third of the session timeout whether the
	// lock is still this session's (Fresh).
	reconfirm := time.NewTicker(e.opts.SessionTimeout / 3)
	defer reconfirm.Stop()
	connected := false
	// tryElect stands for the lock; when that neither wins nor leaves a watch (an error),
	// it tries again after the pause. The retry timer is reset only here: a periodic
	// event (the reconfirm tick) must not keep pushing it back.
	tryElect := func() {
		watch = e.elect(conn)
		if watch == nil && !e.Active() {
			retry.Reset(e.opts.RetryPause)
		}
	}
	for {
		select {
		case <-reconfirm.C:
			if e.Active() {
				asked := e.opts.Now()
				if ok, stat, err := conn.Exists(e.lockPath); err == nil && ok && stat.EphemeralOwner == conn.SessionID() {
					e.confirm(asked)
				}
			}
		case <-ctx.Done():
			if e.Active() {
				// Give the lock up at once: the next RM need not wait for the session to expire.
				conn.Delete(e.lockPath, -1)
			}
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			switch ev.State {
			case zk.StateHasSession:
				connected = true
				tryElect()
			case zk.StateDisconnected:
				if connected {
					e.log.Warn("lost the connection to ZooKeeper")
				}
				connected = false
				e.setActive(false)
			case zk.StateExpired:
				e.log.Warn("ZooKeeper session expired")
				e.setActive(false)
				return
			}
		case <-watch:
			watch = nil
			if connected {
				tryElect()
			}
		case <-retry.C:
			if connected && !e.Active() {
				tryElect()
			}
		case <-e.rejoin:
			if e.Active() {
				conn.Delete(e.lockPath, -1)
				e.setActive(false)
				e.log.Info("gave the election lock up; standing again after a pause")
			}
			watch = nil
			retry.Reset(3 * e.opts.RetryPause)
		}
	}
}

// elect tries to take the lock; it returns a watch on the lock when another holds it.
func (e *Elector) elect(conn *zk.Conn) <-chan zk.Event {
	if err := e.ensureParents(conn); err != nil {
		e.log.WithError(err).Warn("cannot create the election's parent znodes")
		return nil
	}
	_, err := conn.Create(e.lockPath, []byte(e.opts.ID), zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	switch {
	case err == nil:
		return e.activate(conn)
	case errors.Is(err, zk.ErrNodeExists):
	default:
		e.log.WithError(err).Warn("cannot create the election lock")
		return nil
	}
	data, stat, w, err := conn.GetW(e.lockPath)
	if errors.Is(err, zk.ErrNoNode) {
		return e.elect(conn) // released in between
	}
	if err != nil {
		e.log.WithError(err).Warn("cannot read the election lock")
		return nil
	}
	if stat.EphemeralOwner == conn.SessionID() {
		// Ours still: the session survived a lost connection.
		return e.activate(conn)
	}
	e.mu.Lock()
	e.leader = string(data)
	e.mu.Unlock()
	e.setActive(false)
	return w
}

// activate runs BecomeActive holding the lock; if it fails the lock is given up.
func (e *Elector) activate(conn *zk.Conn) <-chan zk.Event {
	e.confirm(e.opts.Now()) // the lock is this session's now
	if !e.Active() {
		e.log.Info("won the election: becoming active")
		if err := e.cb.BecomeActive(); err != nil {
			e.confirm(time.Time{})
			e.log.WithError(err).Error("could not become active; giving the lock up")
			conn.Delete(e.lockPath, -1)
			return nil
		}
		e.setActive(true)
	}
	// Watch the lock while holding it: if it is deleted (an operator, a session expiry
	// this side has not heard of yet) this RM steps down.
	_, _, w, err := conn.ExistsW(e.lockPath)
	if err != nil {
		return nil
	}
	return w
}

func (e *Elector) ensureParents(conn *zk.Conn) error {
	dir := path.Dir(e.lockPath)
	var parts []string
	for p := dir; p != "/" && p != "."; p = path.Dir(p) {
		parts = append([]string{p}, parts...)
	}
	for _, p := range parts {
		if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	return nil
}

type zkLogger struct{ log *logrus.Entry }

func (l zkLogger) Printf(format string, args ...any) { l.log.Debugf("zookeeper: "+format, args...) }
