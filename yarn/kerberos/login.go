package kerberos

import (
	"fmt"
	"net"
	"time"

	"github.com/jcmturner/gokrb5/v8/client"
	metrics "github.com/rcrowley/go-metrics"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/sasl"
)

// Login is a daemon logged in to Kerberos from its keytab, as Java's
// UserGroupInformation.loginUserFromKeytab: its tickets authenticate it to other daemons'
// IPC ports. gokrb5 renews the TGT in the background until Close.
type Login struct {
	cl        *client.Client
	principal Name
}

// The daemon's registry's timers of keytab logins (UgiMetrics' LoginSuccess and
// LoginFailure).
const (
	UgiLoginSuccess = "ugi.LoginSuccess"
	UgiLoginFailure = "ugi.LoginFailure"
)

// LoginFromConf logs in as the principal at principalKey (_HOST resolved against host)
// with the keytab at keytabKey; reg (when not nil) times the login, as Java's UgiMetrics.
func LoginFromConf(c *conf.Configuration, principalKey, keytabKey, host string, reg metrics.Registry) (*Login, error) {
	start := time.Now()
	l, err := loginFromConf(c, principalKey, keytabKey, host)
	if reg != nil {
		name := UgiLoginSuccess
		if err != nil {
			name = UgiLoginFailure
		}
		metrics.GetOrRegisterTimer(name, reg).UpdateSince(start)
	}
	return l, err
}

func loginFromConf(c *conf.Configuration, principalKey, keytabKey, host string) (*Login, error) {
	n, kt, err := identity(c, principalKey, keytabKey, host)
	if err != nil {
		return nil, err
	}
	cfg, err := krb5Config()
	if err != nil {
		return nil, err
	}
	cl := client.NewWithKeytab(n.Service+"/"+n.Host, n.Realm, kt, cfg, client.DisablePAFXFAST(true))
	if err := cl.Login(); err != nil {
		return nil, fmt.Errorf("kerberos login of %s with the keytab of %s: %w", n, keytabKey, err)
	}
	return &Login{cl: cl, principal: n}, nil
}

// Principal is the logged-in principal, service/host@REALM.
func (l *Login) Principal() string { return l.principal.String() }

// Close ends the login (and its renewal).
func (l *Login) Close() { l.cl.Destroy() }

// ClientFor is this login's KERBEROS identity towards the server at addr whose principal
// is configured at serverPrincipalKey (e.g. yarn.resourcemanager.principal): as Java's
// SaslRpcClient, _HOST becomes the name of the address dialled.
func (l *Login) ClientFor(c *conf.Configuration, serverPrincipalKey, addr string) (*rpc.ClientKerberos, error) {
	configured, err := c.Trimmed(serverPrincipalKey)
	if err != nil {
		return nil, err
	}
	if configured == "" {
		return nil, fmt.Errorf("conf: %s must be set with hadoop.security.authentication=kerberos", serverPrincipalKey)
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("address %q: %w", addr, err)
	}
	principal, err := ServerPrincipal(configured, host)
	if err != nil {
		return nil, fmt.Errorf("conf: %s = %q: %w", serverPrincipalKey, configured, err)
	}
	n, err := ParseName(principal)
	if err != nil {
		return nil, fmt.Errorf("conf: %s = %q: %w", serverPrincipalKey, configured, err)
	}
	spn := n.Service
	if n.Host != "" {
		spn += "/" + n.Host
	}
	qop, err := Protection(c)
	if err != nil {
		return nil, err
	}
	return &rpc.ClientKerberos{Tickets: sasl.Tickets(l.cl), ServerPrincipal: spn, QOP: qop}, nil
}
