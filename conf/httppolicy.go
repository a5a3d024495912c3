package conf

import (
	"errors"
	"strings"
)

// CheckHTTPOnly refuses web settings Bobbin's daemons do not serve: HTTPS
// (yarn.http.policy HTTPS_ONLY or HTTP_AND_HTTPS) and the Hadoop 3.x AM HTTPS policy. An
// administrator who asked for TLS gets an error naming the key, not plain HTTP.
func (c *Configuration) CheckHTTPOnly() error {
	var errs []error
	for _, k := range []struct{ key, only string }{
		{"yarn.http.policy", "HTTP_ONLY"},
		{"yarn.resourcemanager.application-https.policy", "NONE"},
	} {
		v, err := c.Trimmed(k.key)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if v != "" && !strings.EqualFold(v, k.only) {
			errs = append(errs, &ValueError{Source: c.Source(k.key), Key: k.key, Value: v, Reason: "Bobbin serves its web ports over HTTP only; set it to " + k.only})
		}
	}
	return errors.Join(errs...)
}
