package conf

import (
	"fmt"
	"net"
	"strconv"
)

// RMAddressOf is the address key names for ResourceManager id in HA, as Hadoop's HAUtil
// resolves it: <key>.<id>, else yarn.resourcemanager.hostname.<id> with defaultPort.
func (c *Configuration) RMAddressOf(id, key string, defaultPort int) (string, error) {
	if v, err := c.Trimmed(key + "." + id); err != nil || v != "" {
		return v, err
	}
	host, err := c.Trimmed("yarn.resourcemanager.hostname." + id)
	if err != nil {
		return "", err
	}
	if host == "" {
		return "", &ValueError{Key: key + "." + id, Reason: fmt.Sprintf("HA needs %s.%s or yarn.resourcemanager.hostname.%s", key, id, id)}
	}
	return net.JoinHostPort(host, strconv.Itoa(defaultPort)), nil
}

// RMAddresses are the addresses key names for every ResourceManager: with HA
// (yarn.resourcemanager.ha.enabled) one per id of yarn.resourcemanager.ha.rm-ids, in
// their order; without, the one address.
func (c *Configuration) RMAddresses(key string, defaultPort int) ([]string, error) {
	on, err := c.Bool("yarn.resourcemanager.ha.enabled")
	if err != nil {
		return nil, err
	}
	if !on {
		host, port, err := c.HostPort(key, defaultPort)
		if err != nil {
			return nil, err
		}
		return []string{net.JoinHostPort(host, strconv.Itoa(port))}, nil
	}
	ids, err := c.Strings("yarn.resourcemanager.ha.rm-ids")
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, &ValueError{Key: "yarn.resourcemanager.ha.rm-ids", Reason: "HA is enabled but no ResourceManager ids are listed"}
	}
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		addr, err := c.RMAddressOf(id, key, defaultPort)
		if err != nil {
			return nil, err
		}
		out = append(out, addr)
	}
	return out, nil
}
