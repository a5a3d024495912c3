// Package nmweb is the NodeManager's web port: the REST API under /ws/v1/node in the Java
// NM's shapes, the web pages under /node (container logs at
// /node/containerlogs/<container>/<user>, the links MR and the RM print), the
// borrowed-mode measurements at /ws/v1/node/borrowed, /jmx, /conf, /logLevel, /stacks,
// /prom, and every go-metrics value at /metrics.
//
// It is an adapter: it reads the container table (package containers) and asks the node,
// through Node, for what only the node knows (its id and health, its log files, its
// figures); it changes nothing.
package nmweb

import (
	"net/http"
	"os"
	"time"

	metrics "github.com/rcrowley/go-metrics"
	"github.com/sirupsen/logrus"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/conf/resourcetypes"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/nodemanager/borrowed"
	"github.com/bobbin-yarn/bobbin/nodemanager/containers"
	"github.com/bobbin-yarn/bobbin/nodemanager/shuffle"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/aggregatedlog"
	"github.com/bobbin-yarn/bobbin/yarn/secureio"
	"github.com/bobbin-yarn/bobbin/yarn/spnego"
	"github.com/bobbin-yarn/bobbin/yarn/webapp"
	"github.com/bobbin-yarn/bobbin/yarn/webuser"
)

// Node is what the web port asks of the NodeManager.
type Node interface {
	// Status is the node's id, web address, start and health now.
	Status() Status
	// ContainerLogs lists the log files of a container of an application of appUser
	// ("": unknown) that OpenContainerLog would open; found: the container has a log dir.
	ContainerLogs(id records.ContainerID, appUser string) (files []secureio.Entry, found bool)
	// OpenContainerLog opens one of a container's log files: fs.ErrNotExist when no log
	// dir has it, a *secureio.RefusedError when one has it but it may not be read.
	OpenContainerLog(id records.ContainerID, name string) (*os.File, error)
	// AggregatedLogs reads a container of this node's logs from its application's
	// aggregated directory (of user) once they are not on the node any more; where is the
	// directory, as a URI.
	AggregatedLogs(id records.ContainerID, user string) (found *aggregatedlog.Found, where string, err error)
	// Borrowed is the borrowed-mode state (ok false: the host is not measured).
	Borrowed() (b Borrowed, ok bool)
	// Figures are the counts the JMX beans show.
	Figures() Figures
	// Resource is what a resource plugin says of its devices (name "yarn.io/gpu"), as
	// Java's /ws/v1/node/resources/{resourcename} serves it; false: no such plugin.
	Resource(name string) (any, bool)
}

// Status is the node's state now.
type Status struct {
	ID          string // "host:port" once bound
	HTTPAddress string
	Started     time.Time
	Health      *yarnpb.NodeHealthStatusProto
}

// Borrowed is the borrowed-mode state: the settings' essentials, the latest decision and
// the measurements, oldest first.
type Borrowed struct {
	Settings borrowed.Settings
	Interval time.Duration
	Latest   *borrowed.Decision // nil before the first measurement
	History  []borrowed.Point
}

// Figures are the node's counts for /jmx.
type Figures struct {
	Launched, Completed, Failed, Killed int64
	// The configured local and log dirs that pass the disk checks, and how many fail.
	GoodLocalDirs, GoodLogDirs []string
	BadLocalDirs, BadLogDirs   int
	Shuffle                    *shuffle.Stats // nil: MapReduce's shuffle is not configured
	// IPCPort is ContainerManager's port (0 before it is bound), IPC its activity.
	IPCPort int
	IPC     rpc.Activity
}

// Resources are the node's configured capacity and checks, as NodeInfo reports them.
type Resources struct {
	MemoryMB, VmemMB     int64
	VCores               int32
	VmemCheck, PmemCheck bool
	Types                resourcetypes.Types
	Host                 string // the node's host name
}

// Options configure the web port.
type Options struct {
	Node      Node
	Table     *containers.Table
	Resources Resources
	LogACLs   LogACLs
	Conf      *conf.Configuration
	Logger    *logrus.Logger // the daemon's (its /logLevel, its log counts)
	Log       *logrus.Entry  // for the port's own lines, with the node's fields
	Metrics   metrics.Registry
	Now       func() time.Time
	Users     *webuser.Policy  // who web callers are, what the unauthenticated may do
	Redact    *webapp.Redactor // /conf's sensitive keys
	Addr      string           // yarn.nodemanager.webapp.address, for SPNEGO's host
	Version   string           // the Hadoop version the node says it is
}

// server serves one NodeManager's web port.
type server struct{ Options }

// Check refuses options Handler would refuse (SPNEGO's keys), without building anything:
// a NodeManager checks at New what it serves at Start.
func Check(o Options) error {
	_, err := wrap(o, http.NotFoundHandler())
	return err
}

// wrap puts h behind the callers' decision (yarn/webuser) and, with
// hadoop.http.authentication.type=kerberos, SPNEGO (yarn.nodemanager.webapp.spnego-principal
// and spnego-keytab-file, else hadoop.http.authentication.kerberos.*).
func wrap(o Options, h http.Handler) (http.Handler, error) {
	return spnego.Wrap(o.Users.Wrap(webapp.AnswerOptions(h)), o.Conf, "yarn.nodemanager.webapp.spnego-principal", "yarn.nodemanager.webapp.spnego-keytab-file",
		o.Addr, o.Log)
}

// Handler is what the web port serves (see wrap for who may call). Build it as the node
// starts: the daemon's pages count from then.
func Handler(o Options) (http.Handler, error) {
	s := &server{Options: o}
	mux := http.NewServeMux()
	s.restRoutes(mux)
	host, _ := os.Hostname()
	d := &webapp.Daemon{Service: "NodeManager", Host: host, Conf: o.Conf, Log: o.Logger, Metrics: o.Metrics,
		Started: o.Now(), Beans: s.beans, Web: o.Users, Redact: o.Redact}
	d.Install(mux)
	mux.HandleFunc("GET /ws/v1/node/borrowed", s.serveBorrowed)
	mux.HandleFunc("GET /ws/v1/node/resources/{name...}", s.serveResource)
	if err := s.uiRoutes(mux); err != nil {
		return nil, err
	}
	return wrap(o, mux)
}
