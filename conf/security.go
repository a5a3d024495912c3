package conf

import (
	"errors"
	"strings"
)

// CheckSecurityModes refuses the security modes a daemon does not serve yet, so a cluster
// configured for them never runs open: Kerberos authentication (unless the daemon serves
// it: kerberos), IPC integrity or privacy, and SPNEGO on the web ports. Each refusal names
// its key and value.
func (c *Configuration) CheckSecurityModes(kerberos bool) error {
	var errs []error
	auth, web := "simple", "simple"
	if kerberos {
		if v, err := c.Trimmed("hadoop.security.authentication"); err == nil && strings.EqualFold(v, "kerberos") {
			auth = "kerberos"
		}
		if v, err := c.Trimmed("hadoop.http.authentication.type"); err == nil && strings.EqualFold(v, "kerberos") {
			web = "kerberos" // SPNEGO (yarn/spnego)
		}
	}
	for _, k := range []struct {
		key, served string
		reason      string
	}{
		{"hadoop.security.authentication", auth,
			"this Bobbin daemon authenticates IPC callers with SIMPLE and tokens only; it does not serve Kerberos yet, and will not run open on a cluster configured for it"},
		{"hadoop.http.authentication.type", web,
			"Bobbin's web ports authenticate with simple (user.name) only; SPNEGO is not served yet"},
	} {
		v, err := c.Trimmed(k.key)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if v != "" && !strings.EqualFold(v, k.served) {
			errs = append(errs, &ValueError{Source: c.Source(k.key), Key: k.key, Value: v, Reason: k.reason})
		}
	}
	// A list, as Java's SaslPropertiesResolver reads it; all three are served.
	qops, err := c.Strings("hadoop.rpc.protection")
	if err != nil {
		errs = append(errs, err)
	}
	for _, q := range qops {
		switch strings.ToLower(q) {
		case "authentication", "integrity", "privacy":
		default:
			errs = append(errs, &ValueError{Source: c.Source("hadoop.rpc.protection"), Key: "hadoop.rpc.protection", Value: strings.Join(qops, ","),
				Reason: q + " is not one of authentication, integrity, privacy"})
		}
	}
	return errors.Join(errs...)
}
