package nodemanager

import (
	"errors"

	"github.com/bobbin-yarn/bobbin/conf"
)

// CheckConf reads everything a NodeManager reads from c and the configuration directory
// at start-up — its settings (shuffle, log aggregation, borrowed-server mode), the
// container executor and Kerberos — and returns every problem that would stop it,
// without starting anything (bobbin check-config).
func CheckConf(c *conf.Configuration, dir string) error {
	var errs []error
	s, err := ReadSettings(c)
	if err != nil {
		errs = append(errs, err)
	}
	if _, err := readRunAs(c, dir); err != nil {
		errs = append(errs, err)
	}
	if err == nil {
		if _, err := newNMKerberos(c, s, nil); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
