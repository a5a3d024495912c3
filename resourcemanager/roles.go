package resourcemanager

import (
	"context"
	"net/http"
	"sync/atomic"

	"github.com/bobbin-yarn/bobbin/conf/capacity"
	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
	"github.com/bobbin-yarn/bobbin/resourcemanager/delegation"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmcore"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmha"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/token"
	"github.com/bobbin-yarn/bobbin/yarn/security"
)

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

// State is the RM's HA state (ACTIVE without HA).
func (rm *ResourceManager) State() commonpb.HAServiceStateProto {
	if rm.ha == nil {
		return commonpb.HAServiceStateProto_ACTIVE
	}
	return rm.ha.State()
}

// Activate (rmha.Roles) builds a core on the shared store, which fences the previous
// active and recovers its state, serves it, and only then answers clients.
func (rm *ResourceManager) Activate() (<-chan struct{}, error) {
	opts := rm.opts
	if opts.ConfDir != "" {
		// The queues as they are now (the file may have changed since start, or since a
		// refreshQueues on an earlier activation), as the Java RM reloads them when it
		// becomes active.
		tree, err := capacity.Load(opts.Conf, opts.ConfDir)
		if err != nil {
			return nil, err
		}
		opts.Queues = tree
	}
	core, err := rmcore.New(opts)
	if err != nil {
		return nil, err
	}
	if err := rm.serveCore(core); err != nil {
		core.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	core.Run(ctx)
	rm.mu.Lock()
	rm.core, rm.stopCore = core, cancel
	rm.mu.Unlock()
	for _, s := range []*rpc.Server{rm.client, rm.tracker, rm.scheduler} {
		s.SetActive()
	}
	rm.log.WithField("cluster_timestamp", core.ClusterTimestamp()).Info("transitioned to active")
	return core.Done(), nil
}

// Deactivate (rmha.Roles) stops serving (every call answered StandbyException from now
// on), then stops the core and releases the store.
func (rm *ResourceManager) Deactivate() {
	rm.mu.Lock()
	core, stop := rm.core, rm.stopCore
	rm.stopCore, rm.webCore = nil, nil
	rm.mu.Unlock()
	if stop == nil {
		return // shut down already
	}
	msg := rm.ha.StandbyMessage()
	for _, s := range []*rpc.Server{rm.client, rm.tracker, rm.scheduler} {
		s.SetStandby(msg)
	}
	if adm, err := rmha.StandbyAdmin(msg); err == nil {
		rm.admin.Replace(adm)
	}
	rm.amrm.cur.Store(nil)
	stop()
	core.Wait()
	if err := core.Close(); err != nil {
		rm.log.WithError(err).Warn("closing the state store")
	}
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
	unsure := ""
	if rm.ha != nil {
		unsure = rm.ha.StillActive()
	}
	if h != nil && unsure == "" {
		h.ServeHTTP(w, r)
		return
	}
	rm.ha.ServeStandby(w, r, unsure, rmcore.Version)
}
