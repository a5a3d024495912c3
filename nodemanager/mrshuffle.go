package nodemanager

import (
	"context"
	"net"
	"strconv"

	"github.com/bobbin-yarn/bobbin/nodemanager/auxservices"
	"github.com/bobbin-yarn/bobbin/nodemanager/shuffle"
	"github.com/bobbin-yarn/bobbin/records"
)

// shuffleService is the MapReduce shuffle's aux-service name.
const shuffleService = "mapreduce_shuffle"

// mapreduceShuffle is MapReduce's shuffle (Java's ShuffleHandler) as an auxiliary
// service: reducers fetch map outputs from it over HTTP, checked against the job token
// each application's containers bring as service data.
type mapreduceShuffle struct {
	h        *shuffle.Handler
	addr     string
	maxConns int
	srv      *shuffle.Server // once started
}

var _ auxservices.Service = (*mapreduceShuffle)(nil)

func newMapReduceShuffle(nm *NodeManager) *mapreduceShuffle {
	ss := nm.settings.Shuffle
	h := &shuffle.Handler{LocalDirs: nm.settings.LocalDirs, Logger: nm.log.WithField("service", shuffleService),
		KeepAlive: ss.KeepAlive, KeepAliveTimeout: ss.KeepAliveTimeout, BufferSize: ss.BufferSize, MaxThreads: ss.MaxThreads,
		OwnerOf: func(user string) int { return nm.appFileOwner(user, nil) }}
	return &mapreduceShuffle{h: h, addr: net.JoinHostPort(nm.settings.BindHost, strconv.Itoa(nm.settings.ShufflePort)), maxConns: ss.MaxConnections}
}

func (s *mapreduceShuffle) Name() string { return shuffleService }

func (s *mapreduceShuffle) Start() error {
	srv, err := shuffle.Listen(s.addr, s.h, s.maxConns)
	if err != nil {
		return err
	}
	s.srv = srv
	return nil
}

func (s *mapreduceShuffle) Stop(ctx context.Context) error {
	if s.srv == nil {
		return nil
	}
	return s.srv.Shutdown(ctx)
}

// Meta is the shuffle's port, as the Java ShuffleHandler gives it.
func (s *mapreduceShuffle) Meta() []byte { return shuffle.Metadata(s.srv.Port()) }

// InitializeApplication takes the job token a MapReduce task's service data carries.
func (s *mapreduceShuffle) InitializeApplication(init auxservices.AppInit) error {
	secret, err := shuffle.SecretFromServiceData(init.Data)
	if err != nil {
		return err
	}
	s.h.AddJob(shuffle.JobID(init.App.String()), init.App.String(), init.User, secret)
	return nil
}

func (s *mapreduceShuffle) StopApplication(app records.ApplicationID) {
	s.h.RemoveJob(shuffle.JobID(app.String()))
}

// restoreSecret takes back a job token recorded by a NodeManager that kept the secret
// itself, not the service data (recovery stores written before the service data was).
func (s *mapreduceShuffle) restoreSecret(app records.ApplicationID, user string, secret []byte) {
	s.h.AddJob(shuffle.JobID(app.String()), app.String(), user, secret)
}
