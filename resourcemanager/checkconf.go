package resourcemanager

import (
	"errors"
	"time"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/conf/capacity"
	"github.com/bobbin-yarn/bobbin/conf/resourcetypes"
	"github.com/bobbin-yarn/bobbin/resourcemanager/logretention"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmcore"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmha"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
	"github.com/bobbin-yarn/bobbin/resourcemanager/statestore"
)

// CheckConf reads everything a ResourceManager reads from c and the configuration
// directory at start-up — its settings, HA, the queues and the scheduler's keys, resource
// types, log retention, the state store's keys, security and Kerberos — and returns every
// problem that would stop it, without binding a port or opening the state store (bobbin
// check-config).
func CheckConf(c *conf.Configuration, dir string) error {
	var errs []error
	note := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	_, own, err := rmha.Read(c)
	note(err)
	if own == nil {
		own = c
	}
	note(own.Validate())
	settings, err := rmcore.ReadSettings(own)
	note(err)
	types, typesErr := resourcetypes.Load(own, scheduler.MaxResourceTypes)
	note(typesErr)
	tree, err := capacity.Load(own, dir)
	note(err)
	if tree != nil && typesErr == nil {
		_, _, err := scheduler.FromConf(tree.Conf, tree, scheduler.Types{Names: types.Names()})
		note(err)
	}
	_, _, err = logretention.ReadSettings(own)
	note(err)
	note(statestore.CheckConf(own))
	_, err = rmcore.NewSecurity(own, dir, time.Now, nil)
	note(err)
	if err == nil {
		_, err = rmKerberos(own, settings.ClientAddr)
		note(err)
	}
	return errors.Join(errs...)
}
