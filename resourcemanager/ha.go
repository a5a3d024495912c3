package resourcemanager

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/conf/capacity"
	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/resourcemanager/delegation"
	"github.com/bobbin-yarn/bobbin/resourcemanager/haelector"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmcore"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/token"
	"github.com/bobbin-yarn/bobbin/yarn/protocol"
	"github.com/bobbin-yarn/bobbin/yarn/security"
)

// haProtocol is HAServiceProtocol's name on the wire.
const haProtocol = "org.apache.hadoop.ha.HAServiceProtocol"

// amrmSwitch is the scheduler port's secret manager: the active core's AMRMTokens, none
// on a standby (whose server refuses token logins with StandbyException first).
type amrmSwitch struct {
	cur atomic.Pointer[security.AMRMTokens]
}

func (s *amrmSwitch) TokenKind() string { return token.KindAMRM }

func (s *amrmSwitch) RetrievePassword(id []byte) ([]byte, string, error) {
	m := s.cur.Load()
	if m == nil {
		return nil, "", rpc.Errorf(rpc.ClassStandby, "this ResourceManager is not active")
	}
	return m.RetrievePassword(id)
}

// delegationSwitch verifies RM delegation tokens with the active core's secret manager.
type delegationSwitch struct {
	cur atomic.Pointer[delegation.Manager]
}

func (s *delegationSwitch) TokenKind() string { return delegation.Kind }

func (s *delegationSwitch) RetrievePassword(id []byte) ([]byte, string, error) {
	m := s.cur.Load()
	if m == nil {
		return nil, "", rpc.Errorf(rpc.ClassStandby, "this ResourceManager is not active")
	}
	return m.RetrievePassword(id)
}

func (rm *ResourceManager) standbyMessage() string {
	return fmt.Sprintf("ResourceManager %s is in standby state", rm.ha.id)
}

// stillActive is the servers' check before each call under automatic failover: an active
// RM whose election lock ZooKeeper has not confirmed lately (a process paused past its
// session timeout, just resumed) answers StandbyException until it knows.
func (rm *ResourceManager) stillActive() string {
	if rm.elector == nil || rm.State() != commonpb.HAServiceStateProto_ACTIVE || rm.elector.Fresh() {
		return ""
	}
	return fmt.Sprintf("ResourceManager %s cannot confirm it is still active (no word from ZooKeeper)", rm.ha.id)
}

// State is the RM's HA state (ACTIVE without HA).
func (rm *ResourceManager) State() commonpb.HAServiceStateProto {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return rm.state
}

// transitionToActive builds a core on the shared store (which fences the previous
// active and recovers its state), serves it, and only then answers clients.
func (rm *ResourceManager) transitionToActive() error {
	rm.transMu.Lock()
	defer rm.transMu.Unlock()
	if rm.State() == commonpb.HAServiceStateProto_ACTIVE {
		return nil
	}
	opts := rm.opts
	if opts.ConfDir != "" {
		// The queues as they are now (the file may have changed since start, or since a
		// refreshQueues on an earlier activation), as the Java RM reloads them when it
		// becomes active.
		tree, err := capacity.Load(opts.Conf, opts.ConfDir)
		if err != nil {
			return fmt.Errorf("becoming active: %w", err)
		}
		opts.Queues = tree
	}
	core, err := rmcore.New(opts)
	if err != nil {
		return fmt.Errorf("becoming active: %w", err)
	}
	if err := rm.serveCore(core); err != nil {
		core.Close()
		return fmt.Errorf("becoming active: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	core.Run(ctx)
	rm.mu.Lock()
	rm.Core, rm.stopCore, rm.state = core, cancel, commonpb.HAServiceStateProto_ACTIVE
	rm.mu.Unlock()
	for _, s := range []*rpc.Server{rm.client, rm.tracker, rm.scheduler} {
		s.SetActive()
	}
	go func() { // a fenced active steps down
		select {
		case <-core.Done():
			rm.transitionToStandby("another ResourceManager took over the state store")
		case <-ctx.Done():
		}
	}()
	rm.log.WithField("cluster_timestamp", core.ClusterTimestamp()).Info("transitioned to active")
	return nil
}

// transitionToStandby stops serving (every call answered StandbyException from now on),
// then stops the core and releases the store.
func (rm *ResourceManager) transitionToStandby(why string) {
	rm.transMu.Lock()
	defer rm.transMu.Unlock()
	rm.mu.Lock()
	if rm.state != commonpb.HAServiceStateProto_ACTIVE {
		rm.mu.Unlock()
		return
	}
	rm.state = commonpb.HAServiceStateProto_STANDBY
	core, stop := rm.Core, rm.stopCore
	rm.stopCore, rm.webCore = nil, nil
	rm.mu.Unlock()
	for _, s := range []*rpc.Server{rm.client, rm.tracker, rm.scheduler} {
		s.SetStandby(rm.standbyMessage())
	}
	if adm, err := standbyAdmin(rm.standbyMessage()); err == nil {
		rm.admin.Replace(adm)
	}
	rm.amrm.cur.Store(nil)
	stop()
	core.Wait()
	if err := core.Close(); err != nil {
		rm.log.WithError(err).Warn("closing the state store")
	}
	rm.log.WithField("reason", why).Warn("transitioned to standby")
}

// startElector takes part in the election in ZooKeeper (automatic failover).
func (rm *ResourceManager) startElector() error {
	e, err := haelector.New(haelector.Options{Servers: rm.ha.zkAddr, BasePath: rm.ha.basePath, ClusterID: rm.ha.clusterID, ID: rm.ha.id,
		SessionTimeout: rm.ha.zkTimeout, Logger: rm.opts.Logger}, haelector.Callbacks{
		BecomeActive:  rm.transitionToActive,
		BecomeStandby: func() { rm.transitionToStandby("lost the election lock") },
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	rm.elector, rm.stopElector, rm.electorDone = e, cancel, make(chan struct{})
	go func() {
		defer close(rm.electorDone)
		e.Run(ctx)
	}()
	return nil
}

// haService serves HAServiceProtocol on the admin port: `yarn rmadmin -getServiceState`,
// `-transitionToActive`, `-transitionToStandby`, `-checkHealth`.
func (rm *ResourceManager) haService() (*rpc.Protocol, error) {
	sd := commonpb.File_common_HAServiceProtocol_proto.Services().ByName("HAServiceProtocolService")
	manual := func(info *commonpb.HAStateChangeRequestInfoProto) error {
		if rm.ha.automatic && info.GetReqSource() == commonpb.HARequestSource_REQUEST_BY_USER {
			return rpc.Errorf(rpc.ClassAccessControl, "Manual failover for this ResourceManager is disallowed, because automatic failover is enabled.")
		}
		return nil
	}
	return rpc.ServiceProtocol(haProtocol, sd, map[string]rpc.Method{
		"getServiceStatus": rpc.Unary(func(context.Context, *commonpb.GetServiceStatusRequestProto) (*commonpb.GetServiceStatusResponseProto, error) {
			return &commonpb.GetServiceStatusResponseProto{State: rm.State().Enum(), ReadyToBecomeActive: proto.Bool(true)}, nil
		}),
		"monitorHealth": rpc.Unary(func(context.Context, *commonpb.MonitorHealthRequestProto) (*commonpb.MonitorHealthResponseProto, error) {
			return &commonpb.MonitorHealthResponseProto{}, nil
		}),
		"transitionToActive": rpc.Unary(func(_ context.Context, req *commonpb.TransitionToActiveRequestProto) (*commonpb.TransitionToActiveResponseProto, error) {
			if err := manual(req.GetReqInfo()); err != nil {
				return nil, err
			}
			if err := rm.transitionToActive(); err != nil {
				return nil, rpc.Errorf("org.apache.hadoop.ha.ServiceFailedException", "%v", err)
			}
			return &commonpb.TransitionToActiveResponseProto{}, nil
		}),
		"transitionToStandby": rpc.Unary(func(_ context.Context, req *commonpb.TransitionToStandbyRequestProto) (*commonpb.TransitionToStandbyResponseProto, error) {
			if err := manual(req.GetReqInfo()); err != nil {
				return nil, err
			}
			rm.transitionToStandby("asked by an administrator")
			if rm.elector != nil {
				rm.elector.Rejoin() // another RM may take the lock meanwhile
			}
			return &commonpb.TransitionToStandbyResponseProto{}, nil
		}),
	}, func(method string) error { return rpc.Errorf(rpc.ClassUnsupportedOperation, "%s", method) })
}

// standbyAdmin is the admin protocol of a standby: every call StandbyException, as the
// Java AdminService answers on a standby RM.
func standbyAdmin(msg string) (*rpc.Protocol, error) {
	sd := yarnpb.File_yarn_resourcemanager_administration_protocol_proto.Services().ByName("ResourceManagerAdministrationProtocolService")
	return rpc.ServiceProtocol(protocol.ResourceManagerAdministration, sd, nil, func(string) error { return rpc.Errorf(rpc.ClassStandby, "%s", msg) })
}

// ServeHTTP serves the web port: the active core's endpoints; on a standby,
// /ws/v1/cluster/info (haState STANDBY) and a redirect to the active RM for the rest.
func (rm *ResourceManager) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rm.webMux.ServeHTTP(w, r)
}

// serveActive serves the active core's pages; a standby answers its own state, or sends
// the caller to the active RM. So does an active that cannot confirm its lock (woken from
// a pause past its session): until it knows, it must not answer as active here either.
func (rm *ResourceManager) serveActive(w http.ResponseWriter, r *http.Request) {
	rm.mu.Lock()
	h := rm.webCore
	rm.mu.Unlock()
	unsure := rm.stillActive()
	if h != nil && unsure == "" {
		h.ServeHTTP(w, r)
		return
	}
	if r.URL.Path == "/ws/v1/cluster/info" {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"clusterInfo": map[string]any{"state": "NOTINITED", "haState": "STANDBY",
			"resourceManagerVersion": rmcore.Version, "hadoopVersion": rmcore.Version, "rmId": rm.ha.id}})
		return
	}
	leader := ""
	if rm.elector != nil {
		leader = rm.elector.Leader()
	}
	if addr, ok := rm.ha.webOf[leader]; ok && leader != rm.ha.id {
		http.Redirect(w, r, "http://"+addr+r.URL.RequestURI(), http.StatusTemporaryRedirect)
		return
	}
	if unsure == "" {
		unsure = rm.standbyMessage() + "; no active ResourceManager is known"
	}
	http.Error(w, unsure, http.StatusServiceUnavailable)
}
