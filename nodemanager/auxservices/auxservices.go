// Package auxservices is the NodeManager's home for auxiliary services
// (yarn.nodemanager.aux-services): the services that run inside the NodeManager beside
// its containers, as MapReduce's shuffle does, and as Spark's external shuffle service
// does on a Java NodeManager. Each has the lifecycle of Java's AuxiliaryService:
//
//	Start, Stop                 with the NodeManager
//	InitializeApplication       a container of the application brought service data for it
//	                            (its launch context's serviceData under the service's name)
//	StopApplication             the application ended on this node
//	InitializeContainer,        around each container's life (optional: ContainerHooks)
//	StopContainer
//	Meta                        what AMs get back from startContainers (servicesMetaData)
//	                            and containers read in NM_AUX_SERVICE_<name>
//
// The NodeManager records every application's service data in its recovery store, so a
// restarted NodeManager initializes its services' applications again before it serves.
package auxservices

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sort"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
)

// AppInit is an application's initialization for one service.
type AppInit struct {
	App  records.ApplicationID
	User string
	// Data is the service data a container's launch context carried for the service.
	Data []byte
}

// Service is one auxiliary service.
type Service interface {
	Name() string
	Start() error
	Stop(ctx context.Context) error
	// Meta is what the service tells AMs and containers (its port, for a shuffle).
	Meta() []byte
	// InitializeApplication takes an application's service data; an error refuses the
	// container that brought it.
	InitializeApplication(AppInit) error
	StopApplication(records.ApplicationID)
}

// ContainerHooks is what a service that hears of each container adds.
type ContainerHooks interface {
	InitializeContainer(id records.ContainerID, user string)
	StopContainer(id records.ContainerID, user string)
}

// Set is the NodeManager's services, by name. It is built before the NodeManager starts
// and never changes after: its methods need no lock.
type Set struct {
	byName map[string]Service
	names  []string // sorted
}

// NewSet is a set of services; two of one name are an error.
func NewSet(services ...Service) (*Set, error) {
	s := &Set{byName: map[string]Service{}}
	for _, svc := range services {
		if _, dup := s.byName[svc.Name()]; dup {
			return nil, fmt.Errorf("auxiliary service %q configured twice", svc.Name())
		}
		s.byName[svc.Name()] = svc
		s.names = append(s.names, svc.Name())
	}
	sort.Strings(s.names)
	return s, nil
}

// Start starts every service; when one fails, those started are stopped again.
func (s *Set) Start() error {
	for i, name := range s.names {
		if err := s.byName[name].Start(); err != nil {
			for _, started := range s.names[:i] {
				s.byName[started].Stop(context.Background())
			}
			return fmt.Errorf("auxiliary service %s: %w", name, err)
		}
	}
	return nil
}

// Stop stops every service.
func (s *Set) Stop(ctx context.Context) error {
	var errs []error
	for _, name := range s.names {
		if err := s.byName[name].Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("auxiliary service %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// Has reports whether a service of this name runs.
func (s *Set) Has(name string) bool {
	_, ok := s.byName[name]
	return ok
}

// Empty reports whether no service runs.
func (s *Set) Empty() bool { return len(s.names) == 0 }

// Meta is every service's metadata, as startContainers answers carry it.
func (s *Set) Meta() []*yarnpb.StringBytesMapProto {
	if len(s.names) == 0 {
		return nil
	}
	out := make([]*yarnpb.StringBytesMapProto, 0, len(s.names))
	for _, name := range s.names {
		out = append(out, &yarnpb.StringBytesMapProto{Key: proto.String(name), Value: s.byName[name].Meta()})
	}
	return out
}

// Env is what every container's environment gets: NM_AUX_SERVICE_<name>, each service's
// metadata in base64.
func (s *Set) Env() map[string]string {
	out := map[string]string{}
	for _, name := range s.names {
		out["NM_AUX_SERVICE_"+name] = base64.StdEncoding.EncodeToString(s.byName[name].Meta())
	}
	return out
}

// InitializeApplication hands the service name an application's service data.
func (s *Set) InitializeApplication(name string, init AppInit) error {
	svc, ok := s.byName[name]
	if !ok {
		return fmt.Errorf("the auxService:%s does not exist", name)
	}
	return svc.InitializeApplication(init)
}

// StopApplication tells every service the application ended here.
func (s *Set) StopApplication(app records.ApplicationID) {
	for _, name := range s.names {
		s.byName[name].StopApplication(app)
	}
}

// InitializeContainer tells the services that hear of containers that one starts.
func (s *Set) InitializeContainer(id records.ContainerID, user string) {
	for _, name := range s.names {
		if h, ok := s.byName[name].(ContainerHooks); ok {
			h.InitializeContainer(id, user)
		}
	}
}

// StopContainer tells the services that hear of containers that one ended.
func (s *Set) StopContainer(id records.ContainerID, user string) {
	for _, name := range s.names {
		if h, ok := s.byName[name].(ContainerHooks); ok {
			h.StopContainer(id, user)
		}
	}
}
