// Package rmha is the ResourceManager's high availability (yarn.resourcemanager.ha.*):
// its settings, its role (ACTIVE or STANDBY) and the transitions between them, the
// election in ZooKeeper for automatic failover, HAServiceProtocol on the admin port
// (`yarn rmadmin -getServiceState`, `-transitionToActive`, ...), and what a standby
// answers in place of the active. What becoming active or standby does to the RM — build
// and serve a core, or stop serving it — the RM does, through Roles.
package rmha

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/resourcemanager/haelector"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/protocol"
)

// Protocol is HAServiceProtocol's name on the wire.
const Protocol = "org.apache.hadoop.ha.HAServiceProtocol"

// Roles is what the ResourceManager does as its role changes.
type Roles interface {
	// Activate builds a core on the shared state store (which fences the previous active
	// and recovers its state), serves it, and only then answers clients. fenced is
	// closed if another RM takes the store over from that core.
	Activate() (fenced <-chan struct{}, err error)
	// Deactivate stops serving (every call answered StandbyException from then on), then
	// stops the core and releases the store.
	Deactivate()
}

// Controller holds an RM's role and moves it, one transition at a time. Lock order:
// transMu, then mu; mu is never held while Roles is called.
type Controller struct {
	s      *Settings
	roles  Roles
	log    *logrus.Entry
	logger *logrus.Entry // the elector's

	transMu sync.Mutex // one transition at a time
	mu      sync.Mutex
	state   commonpb.HAServiceStateProto
	// unwatch stops watching the active core for a fence.
	unwatch context.CancelFunc
	// stopped: the RM is shutting down; the role moves no more.
	stopped bool

	// The elector, set by Start before anything else runs, stopped by Stop.
	elector     *haelector.Elector
	stopElector context.CancelFunc
	electorDone chan struct{}
}

// NewController is a standby RM's controller.
func NewController(s *Settings, roles Roles, logger *logrus.Entry) *Controller {
	return &Controller{s: s, roles: roles, logger: logger, log: logger.WithField("component", "resourcemanager").WithField("rm_id", s.ID),
		state: commonpb.HAServiceStateProto_STANDBY}
}

// Settings are the RM's HA settings.
func (c *Controller) Settings() *Settings { return c.s }

// State is the RM's role now.
func (c *Controller) State() commonpb.HAServiceStateProto {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// StandbyMessage is what a standby answers every call with.
func (c *Controller) StandbyMessage() string {
	return fmt.Sprintf("ResourceManager %s is in standby state", c.s.ID)
}

// StillActive is the servers' check before each call under automatic failover: an active
// RM whose election lock ZooKeeper has not confirmed lately (a process paused past its
// session timeout, just resumed) answers StandbyException until it knows.
func (c *Controller) StillActive() string {
	if c.elector == nil || c.State() != commonpb.HAServiceStateProto_ACTIVE || c.elector.Fresh() {
		return ""
	}
	return fmt.Sprintf("ResourceManager %s cannot confirm it is still active (no word from ZooKeeper)", c.s.ID)
}

// ToActive makes the RM active (nothing if it is).
func (c *Controller) ToActive() error {
	c.transMu.Lock()
	defer c.transMu.Unlock()
	c.mu.Lock()
	still := c.state == commonpb.HAServiceStateProto_ACTIVE || c.stopped
	c.mu.Unlock()
	if still {
		return nil
	}
	fenced, err := c.roles.Activate()
	if err != nil {
		return fmt.Errorf("becoming active: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.mu.Lock()
	c.state, c.unwatch = commonpb.HAServiceStateProto_ACTIVE, cancel
	c.mu.Unlock()
	go func() { // a fenced active steps down
		select {
		case <-fenced:
			c.ToStandby("another ResourceManager took over the state store")
		case <-ctx.Done():
		}
	}()
	return nil
}

// ToStandby makes the RM a standby (nothing if it is); why is logged.
func (c *Controller) ToStandby(why string) {
	c.transMu.Lock()
	defer c.transMu.Unlock()
	c.mu.Lock()
	if c.state != commonpb.HAServiceStateProto_ACTIVE || c.stopped {
		c.mu.Unlock()
		return
	}
	c.state = commonpb.HAServiceStateProto_STANDBY
	unwatch := c.unwatch
	c.mu.Unlock()
	unwatch()
	c.roles.Deactivate()
	c.log.WithField("reason", why).Warn("transitioned to standby")
}

// Start takes part in the election in ZooKeeper under automatic failover.
func (c *Controller) Start() error {
	if !c.s.Automatic {
		return nil
	}
	e, err := haelector.New(haelector.Options{Servers: c.s.ZKAddr, BasePath: c.s.BasePath, ClusterID: c.s.ClusterID, ID: c.s.ID,
		SessionTimeout: c.s.ZKTimeout, Logger: c.logger}, haelector.Callbacks{
		BecomeActive:  c.ToActive,
		BecomeStandby: func() { c.ToStandby("lost the election lock") },
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.elector, c.stopElector, c.electorDone = e, cancel, make(chan struct{})
	go func() {
		defer close(c.electorDone)
		e.Run(ctx)
	}()
	return nil
}

// Stop leaves the election, waits for a transition under way and stops watching the
// active core: the RM is shutting down, and nothing moves its role any more (the RM's
// Shutdown stops the core it holds then).
func (c *Controller) Stop() {
	if c.stopElector != nil {
		c.stopElector()
		<-c.electorDone
	}
	c.transMu.Lock()
	defer c.transMu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	if c.unwatch != nil {
		c.unwatch()
	}
}

// Leader is the RM holding the election lock, as this RM's elector last saw it ("": none
// known, or no automatic failover).
func (c *Controller) Leader() string {
	if c.elector == nil {
		return ""
	}
	return c.elector.Leader()
}

// Service is HAServiceProtocol, served on the admin port whatever the role.
func (c *Controller) Service() (*rpc.Protocol, error) {
	sd := commonpb.File_common_HAServiceProtocol_proto.Services().ByName("HAServiceProtocolService")
	manual := func(info *commonpb.HAStateChangeRequestInfoProto) error {
		if c.s.Automatic && info.GetReqSource() == commonpb.HARequestSource_REQUEST_BY_USER {
			return rpc.Errorf(rpc.ClassAccessControl, "Manual failover for this ResourceManager is disallowed, because automatic failover is enabled.")
		}
		return nil
	}
	return rpc.ServiceProtocol(Protocol, sd, map[string]rpc.Method{
		"getServiceStatus": rpc.Unary(func(context.Context, *commonpb.GetServiceStatusRequestProto) (*commonpb.GetServiceStatusResponseProto, error) {
			// An active that cannot confirm its lock (woken from a pause past its session)
			// answers every other call as a standby: so does it here, as its web port's
			// haState does, until it knows.
			if unsure := c.StillActive(); unsure != "" {
				return &commonpb.GetServiceStatusResponseProto{State: commonpb.HAServiceStateProto_STANDBY.Enum(), ReadyToBecomeActive: proto.Bool(false),
					NotReadyReason: proto.String(unsure)}, nil
			}
			return &commonpb.GetServiceStatusResponseProto{State: c.State().Enum(), ReadyToBecomeActive: proto.Bool(true)}, nil
		}),
		"monitorHealth": rpc.Unary(func(context.Context, *commonpb.MonitorHealthRequestProto) (*commonpb.MonitorHealthResponseProto, error) {
			return &commonpb.MonitorHealthResponseProto{}, nil
		}),
		"transitionToActive": rpc.Unary(func(_ context.Context, req *commonpb.TransitionToActiveRequestProto) (*commonpb.TransitionToActiveResponseProto, error) {
			if err := manual(req.GetReqInfo()); err != nil {
				return nil, err
			}
			if err := c.ToActive(); err != nil {
				return nil, rpc.Errorf("org.apache.hadoop.ha.ServiceFailedException", "%v", err)
			}
			return &commonpb.TransitionToActiveResponseProto{}, nil
		}),
		"transitionToStandby": rpc.Unary(func(_ context.Context, req *commonpb.TransitionToStandbyRequestProto) (*commonpb.TransitionToStandbyResponseProto, error) {
			if err := manual(req.GetReqInfo()); err != nil {
				return nil, err
			}
			c.ToStandby("asked by an administrator")
			if c.elector != nil {
				c.elector.Rejoin() // another RM may take the lock meanwhile
			}
			return &commonpb.TransitionToStandbyResponseProto{}, nil
		}),
		// 3.3+ (HDFS's observer NameNodes): Apache's RM refuses it in these words.
		"transitionToObserver": rpc.Unary(func(context.Context, *commonpb.TransitionToObserverRequestProto) (*commonpb.TransitionToObserverResponseProto, error) {
			return nil, rpc.Errorf("org.apache.hadoop.ha.ServiceFailedException", "Does not support transition to Observer")
		}),
	}, func(method string) error { return rpc.Errorf(rpc.ClassUnsupportedOperation, "%s", method) })
}

// StandbyAdmin is the admin protocol of a standby: every call StandbyException, as the
// Java AdminService answers on a standby RM.
func StandbyAdmin(msg string) (*rpc.Protocol, error) {
	sd := yarnpb.File_yarn_resourcemanager_administration_protocol_proto.Services().ByName("ResourceManagerAdministrationProtocolService")
	return rpc.ServiceProtocol(protocol.ResourceManagerAdministration, sd, nil, func(string) error { return rpc.Errorf(rpc.ClassStandby, "%s", msg) })
}

// ServeStandby answers a web call the active core does not: /ws/v1/cluster/info with
// haState STANDBY, else a redirect to the active RM, or 503 with unsure ("" : the
// standby message) when none is known. version is the RM's.
func (c *Controller) ServeStandby(w http.ResponseWriter, r *http.Request, unsure, version string) {
	if r.URL.Path == "/ws/v1/cluster/info" {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"clusterInfo": map[string]any{"state": "NOTINITED", "haState": "STANDBY",
			"resourceManagerVersion": version, "hadoopVersion": version, "rmId": c.s.ID}})
		return
	}
	leader := c.Leader()
	if addr, ok := c.s.WebOf[leader]; ok && leader != c.s.ID {
		http.Redirect(w, r, "http://"+addr+r.URL.RequestURI(), http.StatusTemporaryRedirect)
		return
	}
	if unsure == "" {
		unsure = c.StandbyMessage() + "; no active ResourceManager is known"
	}
	http.Error(w, unsure, http.StatusServiceUnavailable)
}
