package kerberos

import (
	"fmt"
	"strings"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/rpc/sasl"
)

// Protection is hadoop.rpc.protection as a SASL QOP mask (authentication 1, integrity 2,
// privacy 4; a list offers several, as Java's SaslPropertiesResolver reads it).
func Protection(c *conf.Configuration) (byte, error) {
	qops, err := c.Strings("hadoop.rpc.protection")
	if err != nil {
		return 0, err
	}
	var mask byte
	for _, q := range qops {
		switch strings.ToLower(strings.TrimSpace(q)) {
		case "authentication":
			mask |= sasl.QOPAuth
		case "integrity":
			mask |= sasl.QOPIntegrity
		case "privacy":
			mask |= sasl.QOPPrivacy
		default:
			return 0, fmt.Errorf("conf: hadoop.rpc.protection: %q is not one of authentication, integrity, privacy", q)
		}
	}
	if mask == 0 {
		mask = sasl.QOPAuth
	}
	return mask, nil
}
