package rmcore

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/bobbin-yarn/bobbin/conf/fairscheduler"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"

	metrics "github.com/rcrowley/go-metrics"
	"github.com/sirupsen/logrus"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/conf/capacity"
	"github.com/bobbin-yarn/bobbin/resourcemanager/delegation"
	"github.com/bobbin-yarn/bobbin/resourcemanager/webproxy"
	"github.com/bobbin-yarn/bobbin/yarn/kerberos"
)

// Options configure a ResourceManager.
type Options struct {
	Conf *conf.Configuration
	// ConfDir is where capacity-scheduler.xml is re-read on refreshQueues ("" = none).
	ConfDir string
	Queues  *capacity.Tree
	Logger  *logrus.Entry
	Metrics metrics.Registry
	// Now is the clock; the cluster timestamp in every id is its value at New.
	Now func() time.Time
	// Security is the authorization state shared by every core of one daemon (read from
	// Conf and ConfDir at New when nil).
	Security *Security
	// FairReload is how often the Fair Scheduler's allocation file is looked at
	// (0: FairReloadInterval, the Java RM's 10 s).
	FairReload time.Duration
}

// Settings are the configuration values the RM uses, read and checked once at start.
type Settings struct {
	ClientAddr        string
	ClientHandlers    int
	TrackerAddr       string
	TrackerHandlers   int
	SchedulerAddr     string
	SchedulerHandlers int
	AdminAddr         string
	AdminHandlers     int
	WebAddr           string
	// WebHost is the host of yarn.resourcemanager.webapp.address as configured (before
	// bind-host): the host tracking URLs name when the RM serves the web proxy.
	WebHost string
	// ProxyAddr is yarn.web-proxy.address: when set, the web proxy runs apart (bobbin
	// webproxy) and tracking URLs point there; empty, the RM serves /proxy itself.
	ProxyAddr string
	// ProxyTimeout bounds connecting to an AM's web server and each read from it
	// (yarn.resourcemanager.proxy.connection.timeout; 0 when
	// yarn.resourcemanager.proxy.timeout.enabled is false).
	ProxyTimeout time.Duration
	NMHeartbeat  time.Duration
	// NMHeartbeatSpread is bobbin.resourcemanager.nodemanagers.heartbeat-spread-percent:
	// how far (in percent of NMHeartbeat) one answer may move a node's next heartbeat
	// towards its place in the interval (package nmphase).
	NMHeartbeatSpread int
	NMExpiry          time.Duration
	MaxDataLength     int
	MaxAllocationMB   int
	MaxAllocationCore int
	MinAllocationMB   int
	MinAllocationCore int
	MaxAttempts       int
	MaxCompletedApps  int
	// MaxCompletedStored: yarn.resourcemanager.state-store.max-completed-applications.
	MaxCompletedStored int
	ACLEnabled         bool
	// LogAggregation is yarn.log-aggregation-enable and
	// yarn.log-aggregation-status.time-out.ms, for application reports.
	LogAggregation   rmstate.LogAggregationSettings
	AMExpiry         time.Duration // yarn.am.liveness-monitor.expiry-interval-ms
	AllocationExpiry time.Duration // yarn.resourcemanager.rm.container-allocation.expiry-interval-ms
	// Key rolling intervals; each key is activated 1.5 x its liveness interval after it is
	// handed out, so every holder has it before it signs anything.
	AMRMKeyRoll      time.Duration
	ContainerKeyRoll time.Duration
	NMKeyRoll        time.Duration
	// Kerberos is hadoop.security.authentication=kerberos.
	Kerberos bool
	// TokenRemovalDelay is how long a finished application's delegation tokens stay
	// renewed before they are cancelled
	// (yarn.resourcemanager.delayed.delegation-token.removal-interval-ms).
	TokenRemovalDelay time.Duration
	// QOP is hadoop.rpc.protection as a sasl.QOP* mask (token connections both ways).
	QOP byte
	// Delegation is yarn.resourcemanager.delegation.{key.update-interval,
	// token.renew-interval, token.max-lifetime}.
	Delegation       delegation.Settings
	IncludePath      string
	ExcludePath      string
	NodeLabels       bool
	DecommissionPoll time.Duration
	Pprof            bool  // bobbin.resourcemanager.webapp.pprof.enabled
	MaxAppPriority   int32 // yarn.cluster.max-application-priority
	// PlacementHandler is yarn.resourcemanager.placement-constraints.handler (placement.go).
	PlacementHandler string
	// SchedulerClass is yarn.resourcemanager.scheduler.class as configured.
	SchedulerClass string
	// WorkPreserving: after a restart, running attempts and containers carry on
	// (yarn.resourcemanager.work-preserving-recovery.enabled).
	WorkPreserving bool
	// SchedulingWait bounds how long a restarted RM waits for the NodeManagers that were
	// running to register again before it allocates
	// (yarn.resourcemanager.work-preserving-recovery.scheduling-wait-ms).
	SchedulingWait time.Duration
	// QueuePaths names an application's queue by its path in reports (root.default), as
	// Hadoop 3.3+'s Capacity Scheduler does, instead of its leaf name (2.x-3.2's):
	// bobbin.resourcemanager.application-queue-names=path.
	QueuePaths bool
}

// KeyQueueNames is how reports name an application's queue (Bobbin addition): leaf or
// path.
const KeyQueueNames = "bobbin.resourcemanager.application-queue-names"

// KeyHeartbeatSpread bounds the move of a node's heartbeat per answer (Bobbin addition).
const KeyHeartbeatSpread = "bobbin.resourcemanager.nodemanagers.heartbeat-spread-percent"

// Key-rolling keys and the liveness interval each must exceed three times over.
const (
	KeyAMRMRoll      = "yarn.resourcemanager.am-rm-tokens.master-key-rolling-interval-secs"
	KeyContainerRoll = "yarn.resourcemanager.container-tokens.master-key-rolling-interval-secs"
	KeyNMRoll        = "yarn.resourcemanager.nm-tokens.master-key-rolling-interval-secs"
	keyAMExpiry      = "yarn.am.liveness-monitor.expiry-interval-ms"
	keyNMExpiry      = "yarn.nm.liveness-monitor.expiry-interval-ms"
)

// ReadSettings reads and validates the RM's keys, returning every problem at once.
func ReadSettings(c *conf.Configuration) (Settings, error) {
	var s Settings
	var errs []error
	intKey := func(key string, dst *int, min int) {
		v, err := c.Int(key)
		if err != nil {
			errs = append(errs, err)
			return
		}
		if v < min {
			raw, _ := c.Raw(key)
			errs = append(errs, &conf.ValueError{Source: c.Source(key), Key: key, Value: raw, Reason: fmt.Sprintf("must be at least %d", min)})
			return
		}
		*dst = v
	}
	var err error
	if s.ClientAddr, err = bindAddress(c, "yarn.resourcemanager.address", 8032); err != nil {
		errs = append(errs, err)
	}
	intKey("yarn.resourcemanager.client.thread-count", &s.ClientHandlers, 1)
	if s.TrackerAddr, err = bindAddress(c, "yarn.resourcemanager.resource-tracker.address", 8031); err != nil {
		errs = append(errs, err)
	}
	intKey("yarn.resourcemanager.resource-tracker.client.thread-count", &s.TrackerHandlers, 1)
	if s.SchedulerAddr, err = bindAddress(c, "yarn.resourcemanager.scheduler.address", 8030); err != nil {
		errs = append(errs, err)
	}
	intKey("yarn.resourcemanager.scheduler.client.thread-count", &s.SchedulerHandlers, 1)
	if s.AdminAddr, err = bindAddress(c, "yarn.resourcemanager.admin.address", 8033); err != nil {
		errs = append(errs, err)
	}
	intKey("yarn.resourcemanager.admin.client.thread-count", &s.AdminHandlers, 1)
	if s.WebAddr, err = bindAddress(c, "yarn.resourcemanager.webapp.address", 8088); err != nil {
		errs = append(errs, err)
	}
	if s.WebHost, _, err = c.HostPort("yarn.resourcemanager.webapp.address", 8088); err != nil {
		errs = append(errs, err)
	}
	if pw, err := webproxy.ReadSettings(c); err != nil {
		errs = append(errs, err)
	} else {
		s.ProxyAddr, s.ProxyTimeout = pw.Addr, pw.Timeout
	}
	if err := c.CheckHTTPOnly(); err != nil {
		errs = append(errs, err)
	}
	if err := c.CheckSecurityModes(true); err != nil {
		errs = append(errs, err)
	}
	if v, err := c.Trimmed("hadoop.security.authentication"); err != nil {
		errs = append(errs, err)
	} else {
		s.Kerberos = strings.EqualFold(v, "kerberos")
	}
	if q, err := kerberos.Protection(c); err != nil {
		errs = append(errs, err)
	} else {
		s.QOP = q
	}
	for key, dst := range map[string]*time.Duration{
		"yarn.resourcemanager.nodemanagers.heartbeat-interval-ms": &s.NMHeartbeat,
		keyNMExpiry: &s.NMExpiry,
		keyAMExpiry: &s.AMExpiry,
		"yarn.resourcemanager.rm.container-allocation.expiry-interval-ms": &s.AllocationExpiry,
		KeyAMRMRoll:      &s.AMRMKeyRoll,
		KeyContainerRoll: &s.ContainerKeyRoll,
		KeyNMRoll:        &s.NMKeyRoll,
		"yarn.resourcemanager.decommissioning-nodes-watcher.poll-interval-secs": &s.DecommissionPoll,
		"yarn.resourcemanager.delegation.key.update-interval":                   &s.Delegation.KeyUpdate,
		"yarn.resourcemanager.delegation.token.renew-interval":                  &s.Delegation.RenewInterval,
		"yarn.resourcemanager.delegation.token.max-lifetime":                    &s.Delegation.MaxLifetime,
		"yarn.resourcemanager.delayed.delegation-token.removal-interval-ms":     &s.TokenRemovalDelay,
	} {
		unit := time.Millisecond
		if strings.HasSuffix(key, "-secs") {
			unit = time.Second
		}
		d, err := c.Duration(key, unit)
		if err == nil && d <= 0 {
			raw, _ := c.Raw(key)
			err = &conf.ValueError{Source: c.Source(key), Key: key, Value: raw, Reason: "must be positive"}
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		*dst = d
	}
	intKey("ipc.maximum.data.length", &s.MaxDataLength, 1024)
	intKey(KeyHeartbeatSpread, &s.NMHeartbeatSpread, 0)
	if s.NMHeartbeatSpread > 50 {
		raw, _ := c.Raw(KeyHeartbeatSpread)
		errs = append(errs, &conf.ValueError{Source: c.Source(KeyHeartbeatSpread), Key: KeyHeartbeatSpread, Value: raw, Reason: "must be at most 50 (percent of the heartbeat interval)"})
	}
	intKey("yarn.scheduler.minimum-allocation-mb", &s.MinAllocationMB, 0)
	intKey("yarn.scheduler.maximum-allocation-mb", &s.MaxAllocationMB, 1)
	intKey("yarn.scheduler.minimum-allocation-vcores", &s.MinAllocationCore, 0)
	intKey("yarn.scheduler.maximum-allocation-vcores", &s.MaxAllocationCore, 1)
	intKey("yarn.resourcemanager.am.max-attempts", &s.MaxAttempts, 1)
	intKey("yarn.resourcemanager.max-completed-applications", &s.MaxCompletedApps, 0)
	intKey("yarn.resourcemanager.state-store.max-completed-applications", &s.MaxCompletedStored, 0)
	var maxPriority int
	intKey("yarn.cluster.max-application-priority", &maxPriority, 0)
	s.MaxAppPriority = int32(maxPriority)
	if s.MaxAllocationMB > 0 && s.MinAllocationMB > s.MaxAllocationMB {
		errs = append(errs, fmt.Errorf("conf: yarn.scheduler.minimum-allocation-mb (%d) exceeds yarn.scheduler.maximum-allocation-mb (%d)", s.MinAllocationMB, s.MaxAllocationMB))
	}
	if s.MaxAllocationCore > 0 && s.MinAllocationCore > s.MaxAllocationCore {
		errs = append(errs, fmt.Errorf("conf: yarn.scheduler.minimum-allocation-vcores (%d) exceeds yarn.scheduler.maximum-allocation-vcores (%d)", s.MinAllocationCore, s.MaxAllocationCore))
	}
	if s.ACLEnabled, err = c.Bool("yarn.acl.enable"); err != nil {
		errs = append(errs, err)
	}
	if s.LogAggregation.Enabled, err = c.Bool("yarn.log-aggregation-enable"); err != nil {
		errs = append(errs, err)
	}
	if s.LogAggregation.Timeout, err = c.Duration("yarn.log-aggregation-status.time-out.ms", time.Millisecond); err != nil {
		errs = append(errs, err)
	}
	// As the Java secret managers insist: a key must be rolled no sooner than it can be
	// activated twice over, or tokens could be signed with a key a holder lacks.
	for _, r := range []struct {
		roll, expiry         string
		interval, activation time.Duration
	}{
		{KeyAMRMRoll, keyAMExpiry, s.AMRMKeyRoll, s.AMExpiry * 3 / 2},
		{KeyContainerRoll, keyNMExpiry, s.ContainerKeyRoll, s.NMExpiry * 3 / 2},
		{KeyNMRoll, keyNMExpiry, s.NMKeyRoll, s.NMExpiry * 3 / 2},
	} {
		if r.interval > 0 && r.activation > 0 && r.interval <= 2*r.activation {
			raw, _ := c.Raw(r.roll)
			errs = append(errs, &conf.ValueError{Source: c.Source(r.roll), Key: r.roll, Value: raw, Reason: "should be more than 3 X " + r.expiry})
		}
	}
	if s.IncludePath, err = c.Trimmed("yarn.resourcemanager.nodes.include-path"); err != nil {
		errs = append(errs, err)
	}
	if s.ExcludePath, err = c.Trimmed("yarn.resourcemanager.nodes.exclude-path"); err != nil {
		errs = append(errs, err)
	}
	if s.NodeLabels, err = c.Bool("yarn.node-labels.enabled"); err != nil {
		errs = append(errs, err)
	}
	if s.Pprof, err = c.Bool("bobbin.resourcemanager.webapp.pprof.enabled"); err != nil {
		errs = append(errs, err)
	}
	switch v, err := c.Trimmed(KeyQueueNames); {
	case err != nil:
		errs = append(errs, err)
	case v == "path":
		s.QueuePaths = true
	case v != "leaf":
		errs = append(errs, &conf.ValueError{Source: c.Source(KeyQueueNames), Key: KeyQueueNames, Value: v,
			Reason: "must be leaf (Hadoop 2.x-3.2's Capacity Scheduler: default) or path (3.3+'s: root.default)"})
	}
	// HA is the resourcemanager package's layer; a core given ha.enabled directly refuses
	// it rather than run as if it were the only RM.
	if on, err := c.Bool("yarn.resourcemanager.ha.enabled"); err != nil {
		errs = append(errs, err)
	} else if on {
		errs = append(errs, &conf.ValueError{Source: c.Source("yarn.resourcemanager.ha.enabled"), Key: "yarn.resourcemanager.ha.enabled", Value: "true",
			Reason: "the RM core does not run HA by itself: start it through the resourcemanager package (bobbin resourcemanager)"})
	}
	if s.WorkPreserving, err = c.Bool("yarn.resourcemanager.work-preserving-recovery.enabled"); err != nil {
		errs = append(errs, err)
	}
	if s.SchedulingWait, err = c.Duration("yarn.resourcemanager.work-preserving-recovery.scheduling-wait-ms", time.Millisecond); err != nil {
		errs = append(errs, err)
	} else if s.SchedulingWait < 0 {
		raw, _ := c.Raw("yarn.resourcemanager.work-preserving-recovery.scheduling-wait-ms")
		errs = append(errs, &conf.ValueError{Source: c.Source("yarn.resourcemanager.work-preserving-recovery.scheduling-wait-ms"), Key: "yarn.resourcemanager.work-preserving-recovery.scheduling-wait-ms", Value: raw, Reason: "must not be negative"})
	}
	// Features that change what the RM promises clients are refused rather than ignored.
	// (proxy-user-privileges: the Java RM then fetches HDFS tokens for applications that
	// bring none, acting as their user.)
	// (opportunistic-container-allocation: the Java RM then hands out OPPORTUNISTIC
	// containers, queued at the NodeManagers; off, it grants such asks as GUARANTEED
	// containers, as Bobbin always does.)
	// (webapp.api-service.enable: the Java RM then serves the YARN services REST API,
	// /app/v1/services, that `yarn app -launch` calls by default; docs/hadoop3.md.)
	for _, key := range []string{"yarn.resourcemanager.resource-profiles.enabled", "yarn.resourcemanager.reservation-system.enable",
		"yarn.resourcemanager.proxy-user-privileges.enabled", "yarn.resourcemanager.opportunistic-container-allocation.enabled",
		"yarn.webapp.api-service.enable"} {
		on, err := c.Bool(key)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if on {
			errs = append(errs, &conf.ValueError{Source: c.Source(key), Key: key, Value: "true", Reason: "Bobbin does not support this feature; set it to false (the calls are then answered as the Java RM answers them with it off)"})
		}
	}
	// The scheduler class changes what every queue means: the Capacity Scheduler's and the
	// Fair Scheduler's files are read, so any other class stops the RM rather than being
	// run as one of those.
	if s.PlacementHandler, err = c.Trimmed(KeyPlacementHandler); err != nil {
		errs = append(errs, err)
	}
	if v, err := c.Trimmed(KeySchedulerClass); err != nil {
		errs = append(errs, err)
	} else if s.SchedulerClass = cmp.Or(v, CapacitySchedulerClass); v != "" && v != CapacitySchedulerClass && v != fairscheduler.Class {
		errs = append(errs, &conf.ValueError{Source: c.Source(KeySchedulerClass), Key: KeySchedulerClass, Value: v,
			Reason: "Bobbin runs the Capacity Scheduler's configuration (capacity-scheduler.xml) or the Fair Scheduler's allocation file; set it to " + CapacitySchedulerClass + " or " + fairscheduler.Class})
	}
	return s, errors.Join(errs...)
}

// The scheduler class key and the one class Bobbin runs.
const (
	KeySchedulerClass      = "yarn.resourcemanager.scheduler.class"
	CapacitySchedulerClass = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler"
)

// bindAddress resolves the address a server listens on: the configured address, with its
// host replaced by yarn.resourcemanager.bind-host when that is set.
func bindAddress(c *conf.Configuration, key string, defaultPort int) (string, error) {
	host, port, err := c.HostPort(key, defaultPort)
	if err != nil {
		return "", err
	}
	if bh, err := c.Trimmed("yarn.resourcemanager.bind-host"); err != nil {
		return "", err
	} else if bh != "" {
		host = bh
	}
	return net.JoinHostPort(host, strconv.Itoa(port)), nil
}
