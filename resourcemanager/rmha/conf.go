package rmha

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/bobbin-yarn/bobbin/conf"
)

// HA keys, as Hadoop's.
const (
	keyHAEnabled  = "yarn.resourcemanager.ha.enabled"
	keyHAIDs      = "yarn.resourcemanager.ha.rm-ids"
	keyHAID       = "yarn.resourcemanager.ha.id"
	keyHAAuto     = "yarn.resourcemanager.ha.automatic-failover.enabled"
	keyHABasePath = "yarn.resourcemanager.ha.automatic-failover.zk-base-path"
	keyClusterID  = "yarn.resourcemanager.cluster-id"
)

// AddressKeys are the RM's addresses with their default ports: in HA each has a per-id
// form (yarn.resourcemanager.address.rm1), else yarn.resourcemanager.hostname.rm1 with the
// default port.
var AddressKeys = []struct {
	Key  string
	Port int
}{
	{"yarn.resourcemanager.address", 8032},
	{"yarn.resourcemanager.scheduler.address", 8030},
	{"yarn.resourcemanager.resource-tracker.address", 8031},
	{"yarn.resourcemanager.admin.address", 8033},
	{"yarn.resourcemanager.webapp.address", 8088},
	{"yarn.resourcemanager.webapp.https.address", 8090},
}

// Settings are an RM's high-availability settings.
type Settings struct {
	IDs       []string
	ID        string // this RM's
	Automatic bool   // automatic failover: the elector in ZooKeeper decides
	ZKAddr    string
	BasePath  string
	ClusterID string
	ZKTimeout time.Duration
	// WebOf is each RM's web address (for the standby's redirect).
	WebOf map[string]string
}

// Read reads the HA keys. With HA on it returns this RM's configuration: the per-id
// addresses of its id copied into the plain keys (as Hadoop's HAUtil does), so the rest of
// the RM reads its own addresses. Every missing or contradictory key is an error naming it.
func Read(c *conf.Configuration) (*Settings, *conf.Configuration, error) {
	on, err := c.Bool(keyHAEnabled)
	if err != nil || !on {
		return nil, c, err
	}
	h := &Settings{WebOf: map[string]string{}}
	if h.IDs, err = c.Strings(keyHAIDs); err != nil {
		return nil, nil, err
	}
	if len(h.IDs) < 2 {
		raw, _ := c.Raw(keyHAIDs)
		return nil, nil, &conf.ValueError{Source: c.Source(keyHAIDs), Key: keyHAIDs, Value: raw, Reason: "HA needs at least two ResourceManager ids"}
	}
	addrOf := c.RMAddressOf
	for _, id := range h.IDs {
		if h.WebOf[id], err = addrOf(id, "yarn.resourcemanager.webapp.address", 8088); err != nil {
			return nil, nil, err
		}
	}
	if h.ID, err = c.Trimmed(keyHAID); err != nil {
		return nil, nil, err
	}
	if h.ID == "" {
		if h.ID, err = localID(h.IDs, func(id string) (string, error) { return addrOf(id, "yarn.resourcemanager.address", 8032) }); err != nil {
			return nil, nil, err
		}
	} else if !slices.Contains(h.IDs, h.ID) {
		return nil, nil, &conf.ValueError{Source: c.Source(keyHAID), Key: keyHAID, Value: h.ID, Reason: "not one of " + keyHAIDs}
	}
	if h.Automatic, err = c.Bool(keyHAAuto); err != nil {
		return nil, nil, err
	}
	if h.BasePath, err = c.Trimmed(keyHABasePath); err != nil {
		return nil, nil, err
	}
	if h.ClusterID, err = c.Trimmed(keyClusterID); err != nil {
		return nil, nil, err
	}
	if h.Automatic && h.ClusterID == "" {
		return nil, nil, &conf.ValueError{Key: keyClusterID, Reason: "automatic failover needs the cluster id the RMs elect under"}
	}
	if h.ZKAddr, err = c.Trimmed("hadoop.zk.address"); err == nil && h.ZKAddr == "" {
		h.ZKAddr, err = c.Trimmed("yarn.resourcemanager.zk-address")
	}
	if err != nil {
		return nil, nil, err
	}
	if h.Automatic && h.ZKAddr == "" {
		return nil, nil, &conf.ValueError{Key: "hadoop.zk.address", Reason: "automatic failover elects the active RM in ZooKeeper: set hadoop.zk.address (or yarn.resourcemanager.zk-address)"}
	}
	if h.ZKTimeout, err = c.Duration("yarn.resourcemanager.zk-timeout-ms", time.Millisecond); err != nil {
		return nil, nil, err
	}
	// The RMs share their state: only ZooKeeper's store is shared by both.
	if rec, err := c.Bool("yarn.resourcemanager.recovery.enabled"); err != nil {
		return nil, nil, err
	} else if class, _ := c.Trimmed("yarn.resourcemanager.store.class"); !rec || !strings.HasSuffix(class, "ZKRMStateStore") {
		return nil, nil, &conf.ValueError{Key: "yarn.resourcemanager.store.class", Value: class,
			Reason: "RMs in HA share their state: set yarn.resourcemanager.recovery.enabled=true and yarn.resourcemanager.store.class=org.apache.hadoop.yarn.server.resourcemanager.recovery.ZKRMStateStore"}
	}
	own := c.Clone()
	for _, k := range AddressKeys {
		addr, err := addrOf(h.ID, k.Key, k.Port)
		if err != nil {
			return nil, nil, err
		}
		own.Set(k.Key, addr)
	}
	// The core under this package is not HA-aware (it refuses the key); HA is this layer's.
	own.Set(keyHAEnabled, "false")
	return h, own, nil
}

// localID finds the id whose RM address is on this machine, as Hadoop's HAUtil does when
// yarn.resourcemanager.ha.id is unset; exactly one must be.
func localID(ids []string, addrOf func(string) (string, error)) (string, error) {
	var found []string
	for _, id := range ids {
		addr, err := addrOf(id)
		if err != nil {
			return "", err
		}
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return "", err
		}
		if isLocalHost(host) {
			found = append(found, id)
		}
	}
	if len(found) != 1 {
		return "", &conf.ValueError{Key: keyHAID, Reason: fmt.Sprintf("cannot tell which of %v this ResourceManager is (%d have a local address): set %s", ids, len(found), keyHAID)}
	}
	return found[0], nil
}

func isLocalHost(host string) bool {
	ips, err := net.LookupIP(host)
	if err != nil {
		return false
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, ip := range ips {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
				return true
			}
		}
	}
	return false
}
