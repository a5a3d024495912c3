package authz

import (
	"fmt"
	"net"
	"strings"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/conf/capacity"
	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
	"github.com/bobbin-yarn/bobbin/rpc"
)

// MachineList is Hadoop's MachineList: "*", or IP addresses, CIDR ranges and host names
// (resolved when the list is read).
type MachineList struct {
	all  bool
	ips  []net.IP
	nets []*net.IPNet
}

// ParseMachineList reads a comma-separated list; an empty one includes nothing.
func ParseMachineList(s string) MachineList {
	var m MachineList
	for _, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		switch {
		case e == "":
		case e == "*":
			m.all = true
		case strings.Contains(e, "/"):
			if _, n, err := net.ParseCIDR(e); err == nil {
				m.nets = append(m.nets, n)
			}
		case net.ParseIP(e) != nil:
			m.ips = append(m.ips, net.ParseIP(e))
		default:
			addrs, _ := net.LookupIP(e)
			m.ips = append(m.ips, addrs...)
		}
	}
	return m
}

// Includes reports whether ip is on the list (an unknown address only on "*").
func (m MachineList) Includes(ip net.IP) bool {
	if m.all {
		return true
	}
	if ip == nil {
		return false
	}
	for _, a := range m.ips {
		if a.Equal(ip) {
			return true
		}
	}
	for _, n := range m.nets {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

// ProxyUsers are the super-users allowed to act for others (hadoop.proxyuser.<user>.users,
// .groups and .hosts), as Hadoop's DefaultImpersonationProvider reads them.
type ProxyUsers struct {
	users map[string]proxyRule
}

type proxyRule struct {
	acl   capacity.ACL // whom the super-user may act for: users and groups
	hosts MachineList
	any   bool // users or groups configured: without either nobody may be impersonated
}

const proxyPrefix = "hadoop.proxyuser."

// LoadProxyUsers reads every hadoop.proxyuser.<user>.{users,groups,hosts} key of c.
func LoadProxyUsers(c *conf.Configuration) (*ProxyUsers, error) {
	p := &ProxyUsers{users: map[string]proxyRule{}}
	for _, k := range c.Keys() {
		if !strings.HasPrefix(k, proxyPrefix) {
			continue
		}
		rest := strings.TrimPrefix(k, proxyPrefix)
		i := strings.LastIndexByte(rest, '.')
		if i <= 0 {
			continue
		}
		name, field := rest[:i], rest[i+1:]
		v, err := c.Get(k)
		if err != nil {
			return nil, err
		}
		r := p.users[name]
		switch field {
		case "users":
			r.any = true
			if strings.TrimSpace(v) == "*" {
				r.acl.All = true
			} else {
				r.acl.Users = splitTrim(v)
			}
		case "groups":
			r.any = true
			if strings.TrimSpace(v) == "*" {
				r.acl.All = true
			} else {
				r.acl.Groups = splitTrim(v)
			}
		case "hosts":
			r.hosts = ParseMachineList(v)
		default:
			continue
		}
		p.users[name] = r
	}
	return p, nil
}

// Authorize lets real act as effective (in groups) from ip, with Java's refusals.
func (p *ProxyUsers) Authorize(real, effective string, groups []string, ip net.IP) error {
	r, ok := p.users[real]
	if !ok || !r.any || !r.acl.Allows(effective, groups) {
		return &rpc.RemoteError{Class: ClassAuthorization, Code: commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, Fatal: true,
			Message: fmt.Sprintf("User: %s is not allowed to impersonate %s", real, effective)}
	}
	if !r.hosts.Includes(ip) {
		return &rpc.RemoteError{Class: ClassAuthorization, Code: commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, Fatal: true,
			Message: fmt.Sprintf("Unauthorized connection for super-user: %s from IP %s", real, ip)}
	}
	return nil
}

func splitTrim(s string) []string {
	var out []string
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}
