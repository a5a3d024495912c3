package kerberos

import (
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/keytab"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/sasl"
)

// Enabled reports hadoop.security.authentication=kerberos.
func Enabled(c *conf.Configuration) (bool, error) {
	v, err := c.Trimmed("hadoop.security.authentication")
	return strings.EqualFold(v, "kerberos"), err
}

// ServerPrincipal resolves a configured service principal as Hadoop's
// SecurityUtil.getServerPrincipal does: _HOST becomes host (the local host name when host
// is empty or 0.0.0.0; an address is named by reverse lookup, as Java's getHostName
// names it — what clients resolve the address to and expect), lower-cased.
func ServerPrincipal(configured, host string) (string, error) {
	if host == "" || host == "0.0.0.0" {
		h, err := os.Hostname()
		if err != nil {
			return "", err
		}
		host = h
	} else if net.ParseIP(host) != nil {
		if names, err := net.LookupAddr(host); err == nil && len(names) > 0 {
			host = strings.TrimSuffix(names[0], ".")
		}
	}
	n, err := ParseName(configured)
	if err != nil {
		return "", err
	}
	if n.Host == "_HOST" {
		n.Host = strings.ToLower(host)
	}
	return n.String(), nil
}

// ServerFromConf is a daemon's Kerberos identity on its IPC ports: the principal from
// principalKey (service/_HOST@REALM, _HOST resolved against host), its keys from the
// keytab at keytabKey, and hadoop.security.auth_to_local for naming callers. Every missing
// or unusable value is an error naming its key.
func ServerFromConf(c *conf.Configuration, principalKey, keytabKey, host string) (*rpc.Kerberos, error) {
	n, kt, err := identity(c, principalKey, keytabKey, host)
	if err != nil {
		return nil, err
	}
	defaultRealm := krb5DefaultRealm()
	if defaultRealm == "" {
		defaultRealm = n.Realm
	}
	rulesText, err := c.Get("hadoop.security.auth_to_local")
	if err != nil {
		return nil, err
	}
	rules, err := ParseRules(rulesText, defaultRealm)
	if err != nil {
		return nil, fmt.Errorf("conf: hadoop.security.auth_to_local: %w", err)
	}
	qop, err := Protection(c)
	if err != nil {
		return nil, err
	}
	service := n.Service + "/" + n.Host
	return &rpc.Kerberos{
		Acceptor:  func() *sasl.GSSAPIServer { return sasl.NewGSSAPIServer(kt, service, qop, 5*time.Minute) },
		Protocol:  n.Service,
		ServerID:  n.Host,
		ShortName: rules.ShortName,
	}, nil
}

// identity reads a daemon's principal (principalKey, _HOST resolved against host, the
// default realm when it names none) and loads the keytab at keytabKey, which must hold a
// key for it.
func identity(c *conf.Configuration, principalKey, keytabKey, host string) (Name, *keytab.Keytab, error) {
	configured, err := c.Trimmed(principalKey)
	if err != nil {
		return Name{}, nil, err
	}
	if configured == "" {
		return Name{}, nil, fmt.Errorf("conf: %s must be set with hadoop.security.authentication=kerberos", principalKey)
	}
	principal, err := ServerPrincipal(configured, host)
	if err != nil {
		return Name{}, nil, fmt.Errorf("conf: %s = %q: %w", principalKey, configured, err)
	}
	n, _ := ParseName(principal)
	if n.Host == "" {
		return Name{}, nil, fmt.Errorf("conf: %s = %q: Kerberos principal name does NOT have the expected hostname part", principalKey, configured)
	}
	path, err := c.Trimmed(keytabKey)
	if err != nil {
		return Name{}, nil, err
	}
	if path == "" {
		return Name{}, nil, fmt.Errorf("conf: %s must be set with hadoop.security.authentication=kerberos", keytabKey)
	}
	kt, err := keytab.Load(path)
	if err != nil {
		return Name{}, nil, fmt.Errorf("conf: %s = %q: %w", keytabKey, path, err)
	}
	if n.Realm == "" {
		n.Realm = krb5DefaultRealm()
	}
	if !hasKey(kt, n) {
		return Name{}, nil, fmt.Errorf("conf: %s = %q has no key for %s (from %s)", keytabKey, path, n, principalKey)
	}
	return n, kt, nil
}

func hasKey(kt *keytab.Keytab, n Name) bool {
	for _, e := range kt.Entries {
		if e.Principal.Realm == n.Realm && strings.Join(e.Principal.Components, "/") == n.Service+"/"+n.Host {
			return true
		}
	}
	return false
}

// krb5DefaultRealm is default_realm of the Kerberos configuration (KRB5_CONFIG, else
// /etc/krb5.conf), "" when there is none.
func krb5DefaultRealm() string {
	cfg, err := krb5Config()
	if err != nil {
		return ""
	}
	return cfg.LibDefaults.DefaultRealm
}

// krb5Config loads the Kerberos configuration: KRB5_CONFIG, else /etc/krb5.conf.
func krb5Config() (*config.Config, error) {
	path := os.Getenv("KRB5_CONFIG")
	if path == "" {
		path = "/etc/krb5.conf"
	}
	cfg, err := config.Load(path)
	if err != nil {
		return nil, fmt.Errorf("kerberos configuration %s: %w", path, err)
	}
	return cfg, nil
}

// DefaultRealm is the Kerberos configuration's default realm, or fallback when there is
// none (auth_to_local's DEFAULT rule needs one).
func DefaultRealm(fallback string) string {
	if r := krb5DefaultRealm(); r != "" {
		return r
	}
	return fallback
}
