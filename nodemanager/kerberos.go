package nodemanager

import (
	"fmt"

	metrics "github.com/rcrowley/go-metrics"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/yarn/kerberos"
)

// nmKerberos is the NodeManager's Kerberos identity with
// hadoop.security.authentication=kerberos, as the Java NM's secure mode: it logs in with
// yarn.nodemanager.principal and keytab (_HOST being the node's host name), offers
// KERBEROS beside NM tokens on its ContainerManager port, and authenticates to each RM's
// resource tracker whose principal is yarn.resourcemanager.principal.
type nmKerberos struct {
	server *rpc.Kerberos
	login  *kerberos.Login
	rm     map[string]*rpc.ClientKerberos // by resource-tracker address
}

// newNMKerberos is nil without Kerberos; a configuration it cannot serve is an error
// naming its key. reg (when not nil) times the login.
func newNMKerberos(c *conf.Configuration, s Settings, reg metrics.Registry) (*nmKerberos, error) {
	on, err := kerberos.Enabled(c)
	if err != nil || !on {
		return nil, err
	}
	const principalKey, keytabKey = "yarn.nodemanager.principal", "yarn.nodemanager.keytab"
	server, err := kerberos.ServerFromConf(c, principalKey, keytabKey, s.Host)
	if err != nil {
		return nil, fmt.Errorf("nodemanager: %w", err)
	}
	login, err := kerberos.LoginFromConf(c, principalKey, keytabKey, s.Host, reg)
	if err != nil {
		return nil, fmt.Errorf("nodemanager: %w", err)
	}
	k := &nmKerberos{server: server, login: login, rm: map[string]*rpc.ClientKerberos{}}
	for _, addr := range s.RMTrackers {
		ck, err := login.ClientFor(c, "yarn.resourcemanager.principal", addr)
		if err != nil {
			login.Close()
			return nil, fmt.Errorf("nodemanager: the ResourceManager at %s: %w", addr, err)
		}
		k.rm[addr] = ck
	}
	return k, nil
}

// serverOpt is what the ContainerManager port offers besides tokens (nil: nothing).
func (k *nmKerberos) serverOpt() *rpc.Kerberos {
	if k == nil {
		return nil
	}
	return k.server
}

// towardsRM is the identity for the resource tracker at addr (nil: SIMPLE).
func (k *nmKerberos) towardsRM(addr string) *rpc.ClientKerberos {
	if k == nil {
		return nil
	}
	return k.rm[addr]
}

func (k *nmKerberos) close() {
	if k != nil {
		k.login.Close()
	}
}
