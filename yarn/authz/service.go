package authz

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/conf/capacity"
	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/protocol"
)

// ClassAuthorization is the exception class a refused connection reaches Java clients as.
const ClassAuthorization = "org.apache.hadoop.security.authorize.AuthorizationException"

// PolicyFile is the service-level authorization file read from the configuration
// directory over core-site.xml and yarn-site.xml, as Java's ServiceAuthorizationManager
// reads it.
const PolicyFile = "hadoop-policy.xml"

// Service names one protocol's ACL key (the Java PolicyProvider's entries).
type Service struct {
	Protocol string // as the connection context names it
	Key      string // security.*.protocol.acl
}

// haProtocol is HAServiceProtocol as a client names it.
const haProtocol = "org.apache.hadoop.ha.HAServiceProtocol"

// RMServices are the ResourceManager's protocols (Java's RMPolicyProvider).
var RMServices = []Service{
	{protocol.ResourceTracker, "security.resourcetracker.protocol.acl"},
	{protocol.ApplicationClient, "security.applicationclient.protocol.acl"},
	{protocol.ApplicationMaster, "security.applicationmaster.protocol.acl"},
	{protocol.ResourceManagerAdministration, "security.resourcemanager-administration.protocol.acl"},
	{protocol.ContainerManagement, "security.containermanagement.protocol.acl"},
	{haProtocol, "security.ha.service.protocol.acl"},
}

// NMServices are the NodeManager's protocols (Java's NMPolicyProvider).
var NMServices = []Service{
	{protocol.ContainerManagement, "security.containermanagement.protocol.acl"},
	{"org.apache.hadoop.yarn.server.nodemanager.api.LocalizationProtocolPB", "security.resourcelocalizer.protocol.acl"},
}

// Policy decides whether an authenticated IPC connection may use the protocol it named and
// whether its real user may act for its effective user. Reload swaps its rules.
type Policy struct {
	services []Service
	policy   string // hadoop-policy.xml's path ("" for none)
	groups   *Groups

	mu      sync.RWMutex
	enabled bool
	rules   map[string]serviceRule
	proxy   *ProxyUsers
}

type serviceRule struct {
	key          string
	allow, block capacity.ACL
	hosts        MachineList
	blockedHosts MachineList
}

// NewPolicy reads hadoop.security.authorization and the proxy-user keys from c, and the
// service ACLs from confDir's hadoop-policy.xml laid over c.
func NewPolicy(c *conf.Configuration, confDir string, services []Service, groups *Groups) (*Policy, error) {
	p := &Policy{services: services, groups: groups}
	if confDir != "" {
		p.policy = filepath.Join(confDir, PolicyFile)
	}
	if err := p.Reload(c); err != nil {
		return nil, err
	}
	return p, nil
}

// Reload re-reads everything from c (and the policy file): nothing changes on an error.
func (p *Policy) Reload(c *conf.Configuration) error {
	enabled, err := c.Bool("hadoop.security.authorization")
	if err != nil {
		return err
	}
	rules, err := p.loadRules(c)
	if err != nil {
		return err
	}
	proxy, err := LoadProxyUsers(c)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.enabled, p.rules, p.proxy = enabled, rules, proxy
	p.mu.Unlock()
	return nil
}

// ReloadServiceACLs re-reads only the service ACLs (`rmadmin -refreshServiceAcl`), from
// c and the policy file. Java refuses it when authorization is off.
func (p *Policy) ReloadServiceACLs(c *conf.Configuration) error {
	if !p.Enabled() {
		return errors.New("Service Authorization (hadoop.security.authorization) not enabled.")
	}
	rules, err := p.loadRules(c)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.rules = rules
	p.mu.Unlock()
	return nil
}

// ReloadProxyUsers re-reads hadoop.proxyuser.* (`rmadmin -refreshSuperUserGroupsConfiguration`).
func (p *Policy) ReloadProxyUsers(c *conf.Configuration) error {
	proxy, err := LoadProxyUsers(c)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.proxy = proxy
	p.mu.Unlock()
	return nil
}

// Enabled reports hadoop.security.authorization.
func (p *Policy) Enabled() bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.enabled
}

func (p *Policy) loadRules(c *conf.Configuration) (map[string]serviceRule, error) {
	pc := c.Clone()
	if p.policy != "" {
		if err := pc.AddFileIfExists(p.policy); err != nil {
			return nil, err
		}
	}
	defAllow, err := pc.Get("security.service.authorization.default.acl")
	if err != nil {
		return nil, err
	}
	defBlock, err := pc.Get("security.service.authorization.default.acl.blocked")
	if err != nil {
		return nil, err
	}
	rules := map[string]serviceRule{}
	for _, s := range p.services {
		r := serviceRule{key: s.Key}
		allow, ok, err := pc.Lookup(s.Key)
		if err != nil {
			return nil, err
		}
		if !ok {
			allow = defAllow
		}
		block, ok, err := pc.Lookup(s.Key + ".blocked")
		if err != nil {
			return nil, err
		}
		if !ok {
			block = defBlock
		}
		r.allow, r.block = capacity.ParseACL(allow), capacity.ParseACL(block)
		hostsKey := strings.TrimSuffix(s.Key, ".acl") + ".hosts"
		hosts, ok, err := pc.Lookup(hostsKey)
		if err != nil {
			return nil, err
		}
		if !ok {
			hosts = "*"
		}
		r.hosts = ParseMachineList(hosts)
		blocked, _, err := pc.Lookup(hostsKey + ".blocked")
		if err != nil {
			return nil, err
		}
		r.blockedHosts = ParseMachineList(blocked)
		rules[s.Protocol] = r
	}
	return rules, nil
}

// Authorize admits or refuses a connection once its caller is known, as Java's
// Server.authorizeConnection does: a real user acting for another must be a proxy user
// allowed to (token connections excepted), then, with hadoop.security.authorization, the
// protocol's ACLs apply to the effective user and the caller's address.
func (p *Policy) Authorize(c *rpc.Caller) error {
	p.mu.RLock()
	enabled, rules, proxy := p.enabled, p.rules, p.proxy
	p.mu.RUnlock()
	ip := addrIP(c.RemoteAddr)
	if c.RealUser != "" && c.RealUser != c.User && c.Auth != rpc.AuthToken {
		if err := proxy.Authorize(c.RealUser, c.User, p.groups.Of(c.User), ip); err != nil {
			return err
		}
	}
	if !enabled {
		return nil
	}
	r, ok := rules[c.Protocol]
	if !ok {
		return &rpc.RemoteError{Class: ClassAuthorization, Message: fmt.Sprintf("Protocol interface %s is not known.", c.Protocol), Code: commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, Fatal: true}
	}
	groups := p.groups.Of(c.User)
	if !r.allow.Allows(c.User, groups) || r.block.Allows(c.User, groups) {
		return &rpc.RemoteError{Class: ClassAuthorization, Code: commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, Fatal: true,
			Message: fmt.Sprintf("User %s is not authorized for protocol interface %s, expected client Kerberos principal is null", describe(c), c.Protocol)}
	}
	if !r.hosts.Includes(ip) || r.blockedHosts.Includes(ip) {
		return &rpc.RemoteError{Class: ClassAuthorization, Code: commonpb.RpcResponseHeaderProto_FATAL_UNAUTHORIZED, Fatal: true,
			Message: fmt.Sprintf("Host %s is not authorized for protocol interface %s", ip, c.Protocol)}
	}
	return nil
}

// describe is the caller as Java's UserGroupInformation.toString writes it.
func describe(c *rpc.Caller) string {
	if c.RealUser != "" && c.RealUser != c.User {
		return fmt.Sprintf("%s (auth:PROXY) via %s (auth:%s)", c.User, c.RealUser, c.Auth)
	}
	return fmt.Sprintf("%s (auth:%s)", c.User, c.Auth)
}

func addrIP(a net.Addr) net.IP {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.IP
	case nil:
		return nil
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return nil
	}
	return net.ParseIP(host)
}
