package spnego

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/sirupsen/logrus"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/yarn/kerberos"
)

// Keys Hadoop reads for SPNEGO on the web ports; the daemons' own keys
// (yarn.resourcemanager.webapp.spnego-principal, …) take precedence when set.
const (
	KeyType      = "hadoop.http.authentication.type"
	KeyPrincipal = "hadoop.http.authentication.kerberos.principal"
	KeyKeytab    = "hadoop.http.authentication.kerberos.keytab"
	KeyValidity  = "hadoop.http.authentication.token.validity"
)

// Enabled reports hadoop.http.authentication.type=kerberos.
func Enabled(c *conf.Configuration) (bool, error) {
	v, err := c.Trimmed(KeyType)
	return strings.EqualFold(v, "kerberos"), err
}

// Wrap puts SPNEGO in front of next when hadoop.http.authentication.type is kerberos
// (next itself otherwise). principalKey and keytabKey are the daemon's own keys; webAddr
// is its web address, whose host _HOST stands for.
func Wrap(next http.Handler, c *conf.Configuration, principalKey, keytabKey, webAddr string, log *logrus.Entry) (http.Handler, error) {
	on, err := Enabled(c)
	if err != nil || !on {
		return next, err
	}
	pick := func(own, common string) (string, string, error) {
		v, err := c.Trimmed(own)
		if err != nil || v != "" {
			return v, own, err
		}
		v, err = c.Trimmed(common)
		return v, common, err
	}
	configured, pkey, err := pick(principalKey, KeyPrincipal)
	if err != nil {
		return nil, err
	}
	if configured == "" {
		return nil, fmt.Errorf("conf: %s (or %s) must be set with %s=kerberos", principalKey, KeyPrincipal, KeyType)
	}
	host, _, _ := net.SplitHostPort(webAddr)
	principal, err := kerberos.ServerPrincipal(configured, host)
	if err != nil {
		return nil, fmt.Errorf("conf: %s = %q: %w", pkey, configured, err)
	}
	n, err := kerberos.ParseName(principal)
	if err != nil || n.Host == "" {
		return nil, fmt.Errorf("conf: %s = %q: not a service/host principal", pkey, configured)
	}
	path, kkey, err := pick(keytabKey, KeyKeytab)
	if err != nil {
		return nil, err
	}
	if path == "" {
		return nil, fmt.Errorf("conf: %s (or %s) must be set with %s=kerberos", keytabKey, KeyKeytab, KeyType)
	}
	kt, err := keytab.Load(path)
	if err != nil {
		return nil, fmt.Errorf("conf: %s = %q: %w", kkey, path, err)
	}
	rulesText, err := c.Get("hadoop.security.auth_to_local")
	if err != nil {
		return nil, err
	}
	rules, err := kerberos.ParseRules(rulesText, kerberos.DefaultRealm(n.Realm))
	if err != nil {
		return nil, fmt.Errorf("conf: hadoop.security.auth_to_local: %w", err)
	}
	validity := 10 * time.Hour
	if v, err := c.Trimmed(KeyValidity); err != nil {
		return nil, err
	} else if v != "" {
		secs, err := strconv.Atoi(v)
		if err != nil || secs <= 0 {
			return nil, fmt.Errorf("conf: %s = %q: not a positive number of seconds", KeyValidity, v)
		}
		validity = time.Duration(secs) * time.Second
	}
	log.WithField("principal", n.String()).Info("web ports authenticate with SPNEGO (Kerberos)")
	return New(next, Options{Keytab: kt, Principal: n.Service + "/" + n.Host, ShortName: rules.ShortName, Validity: validity, Log: log}), nil
}
