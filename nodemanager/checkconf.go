package nodemanager

import (
	"context"
	"errors"
	"fmt"
	"os"

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
		if s.Borrow.Executor == "uml" {
			errs = append(errs, checkUML(s))
		}
	}
	return errors.Join(errs...)
}

// checkUML checks the UML executor as the NodeManager does at start — its binaries and
// directories, then a probe guest booted with its kernel — with the state directory in
// a temporary one, so that checking creates nothing in the NodeManager's directories.
func checkUML(s Settings) error {
	u := s.Borrow.UML
	dir, err := os.MkdirTemp("", "bobbin-check-uml-")
	if err != nil {
		return fmt.Errorf("nodemanager: bobbin.nodemanager.container-executor=uml: %w", err)
	}
	defer os.RemoveAll(dir)
	u.StateDir = dir
	if err := u.CheckUML(); err != nil {
		return fmt.Errorf("nodemanager: bobbin.nodemanager.container-executor=uml: %w", err)
	}
	if p := u.ProbeUML(context.Background()); p.Err != nil {
		return fmt.Errorf("nodemanager: bobbin.nodemanager.container-executor=uml: %w", p.Err)
	}
	return nil
}
