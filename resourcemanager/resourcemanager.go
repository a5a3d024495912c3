// Package resourcemanager is Bobbin's YARN ResourceManager, wired together: it builds the
// core (rmcore), registers the protocol services (rmservice) on their IPC servers and the
// web handler (rmweb) on its HTTP server, binds them, and stops them in order.
//
// The layers call only downward (integration.TestDaemonsDoNotImportEachOther checks it):
// scheduler (the pure engine) and rmstate (applications, attempts, nodes, containers,
// labels, host lists; its package comment gives the lock order) at the bottom, rmcore
// above them, rmservice and rmweb above that, and this package on top.
package resourcemanager

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/bobbin-yarn/bobbin/resourcemanager/rmweb"

	"github.com/bobbin-yarn/bobbin/resourcemanager/rmcore"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmservice"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
	"github.com/sirupsen/logrus"
)

// Options configure a ResourceManager.
type Options = rmcore.Options

// ResourceManager owns the RM's services. Start binds them; Shutdown stops them.
type ResourceManager struct {
	*rmcore.Core
	client        *rpc.Server
	tracker       *rpc.Server
	scheduler     *rpc.Server
	admin         *rpc.Server
	clientAddr    net.Addr
	trackerAddr   net.Addr
	schedulerAddr net.Addr
	adminAddr     net.Addr
	webAddr       net.Addr
	web           *http.Server
	stopWatch     context.CancelFunc

	mu      sync.Mutex
	serving sync.WaitGroup
	started bool
}

// New builds a ResourceManager from configuration; nothing listens until Start.
func New(opts Options) (*ResourceManager, error) {
	core, err := rmcore.New(opts)
	if err != nil {
		return nil, err
	}
	opts, settings := core.Opts, core.Settings
	rm := &ResourceManager{Core: core}
	cs, err := rmservice.NewClientService(core)
	if err != nil {
		return nil, err
	}
	rt, err := rmservice.NewResourceTracker(core)
	if err != nil {
		return nil, err
	}
	rm.tracker = rpc.NewServer(rpc.ServerOptions{ErrorClass: exceptions.YarnException,
		Name:          "ResourceTrackerService",
		MaxDataLength: settings.MaxDataLength,
		Handlers:      settings.TrackerHandlers,
		Metrics:       opts.Metrics,
		Logger:        opts.Logger,
	})
	rm.tracker.Register(rt)
	ams, err := rmservice.NewAMService(core)
	if err != nil {
		return nil, err
	}
	// The scheduler port offers TOKEN and SIMPLE like a Java RM on an insecure cluster; the
	// AM service itself refuses calls without an AMRMToken.
	rm.scheduler = rpc.NewServer(rpc.ServerOptions{ErrorClass: exceptions.YarnException,
		Name:          "ApplicationMasterService",
		MaxDataLength: settings.MaxDataLength,
		Handlers:      settings.SchedulerHandlers,
		SecretManager: rm.AMRM,
		Metrics:       opts.Metrics,
		Logger:        opts.Logger,
	})
	rm.scheduler.Register(ams)
	adm, err := rmservice.NewAdminService(core)
	if err != nil {
		return nil, err
	}
	rm.admin = rpc.NewServer(rpc.ServerOptions{ErrorClass: exceptions.YarnException, Name: "AdminService", MaxDataLength: settings.MaxDataLength,
		Handlers: settings.AdminHandlers, Metrics: opts.Metrics, Logger: opts.Logger})
	rm.admin.Register(adm)
	rm.client = rpc.NewServer(rpc.ServerOptions{ErrorClass: exceptions.YarnException,
		Name:          "ClientRMService",
		MaxDataLength: settings.MaxDataLength,
		Handlers:      settings.ClientHandlers,
		Metrics:       opts.Metrics,
		Logger:        opts.Logger,
	})
	rm.client.Register(cs)
	return rm, nil
}

// Start binds every service's listener and serves in the background. A bind failure
// closes what was already opened.
func (rm *ResourceManager) Start() error {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if rm.started {
		return errors.New("resourcemanager: already started")
	}
	ln, err := net.Listen("tcp", rm.Settings.ClientAddr)
	if err != nil {
		return fmt.Errorf("resourcemanager: bind yarn.resourcemanager.address %s: %w", rm.Settings.ClientAddr, err)
	}
	tln, err := net.Listen("tcp", rm.Settings.TrackerAddr)
	if err != nil {
		ln.Close()
		return fmt.Errorf("resourcemanager: bind yarn.resourcemanager.resource-tracker.address %s: %w", rm.Settings.TrackerAddr, err)
	}
	sln, err := net.Listen("tcp", rm.Settings.SchedulerAddr)
	if err != nil {
		ln.Close()
		tln.Close()
		return fmt.Errorf("resourcemanager: bind yarn.resourcemanager.scheduler.address %s: %w", rm.Settings.SchedulerAddr, err)
	}
	aln, err := net.Listen("tcp", rm.Settings.AdminAddr)
	if err != nil {
		ln.Close()
		tln.Close()
		sln.Close()
		return fmt.Errorf("resourcemanager: bind yarn.resourcemanager.admin.address %s: %w", rm.Settings.AdminAddr, err)
	}
	wln, err := net.Listen("tcp", rm.Settings.WebAddr)
	if err != nil {
		ln.Close()
		tln.Close()
		sln.Close()
		aln.Close()
		return fmt.Errorf("resourcemanager: bind yarn.resourcemanager.webapp.address %s: %w", rm.Settings.WebAddr, err)
	}
	rm.started = true
	rm.webAddr = wln.Addr()
	rm.web = &http.Server{Handler: rmweb.Handler(rm.Core), ReadHeaderTimeout: 10 * time.Second}
	rm.serving.Add(1)
	go func() {
		defer rm.serving.Done()
		if err := rm.web.Serve(wln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			rm.Log.WithError(err).Error("web server stopped")
		}
	}()
	rm.clientAddr, rm.trackerAddr, rm.schedulerAddr, rm.adminAddr = ln.Addr(), tln.Addr(), sln.Addr(), aln.Addr()
	rm.serve(rm.client, ln)
	rm.serve(rm.tracker, tln)
	rm.serve(rm.scheduler, sln)
	rm.serve(rm.admin, aln)
	ctx, cancel := context.WithCancel(context.Background())
	rm.stopWatch = cancel
	rm.Run(ctx)
	rm.Log.WithFields(logrus.Fields{"cluster_timestamp": rm.ClusterTimestamp(), "client_address": ln.Addr().String(),
		"resource_tracker_address": tln.Addr().String(), "scheduler_address": sln.Addr().String(), "webapp_address": wln.Addr().String(),
		"queues": len(rm.Queues().Queues())}).Info("ResourceManager started")
	return nil
}

func (rm *ResourceManager) serve(s *rpc.Server, ln net.Listener) {
	rm.serving.Add(1)
	go func() {
		defer rm.serving.Done()
		if err := s.Serve(ln); err != nil && !errors.Is(err, rpc.ErrServerClosed) {
			rm.Log.WithError(err).Error("IPC server stopped")
		}
	}()
}

// ClientAddr is where ApplicationClientProtocol is served (after Start).
func (rm *ResourceManager) ClientAddr() net.Addr {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return rm.clientAddr
}

// TrackerAddr is where ResourceTracker is served (after Start).
func (rm *ResourceManager) TrackerAddr() net.Addr {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return rm.trackerAddr
}

// SchedulerAddr is where ApplicationMasterProtocol is served (after Start).
func (rm *ResourceManager) SchedulerAddr() net.Addr {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return rm.schedulerAddr
}

// WebAddr is where the HTTP endpoints are served (after Start).
func (rm *ResourceManager) WebAddr() net.Addr {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return rm.webAddr
}

// AdminAddr is where ResourceManagerAdministrationProtocol is served (after Start).
func (rm *ResourceManager) AdminAddr() net.Addr {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return rm.adminAddr
}

// Shutdown stops every service, letting calls in progress finish until ctx ends.
func (rm *ResourceManager) Shutdown(ctx context.Context) error {
	rm.mu.Lock()
	if rm.stopWatch != nil {
		rm.stopWatch()
	}
	rm.mu.Unlock()
	var webErr error
	if rm.web != nil {
		webErr = rm.web.Shutdown(ctx)
	}
	err := errors.Join(rm.client.Shutdown(ctx), rm.tracker.Shutdown(ctx), rm.scheduler.Shutdown(ctx), rm.admin.Shutdown(ctx), webErr)
	rm.serving.Wait()
	rm.Core.Wait()
	if cerr := rm.Core.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	rm.Log.Info("ResourceManager stopped")
	return err
}
