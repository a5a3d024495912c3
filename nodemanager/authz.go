package nodemanager

import (
	"fmt"

	"github.com/bobbin-yarn/bobbin/yarn/authz"
)

// newPolicy reads who may connect to the NodeManager's IPC port: service ACLs
// (hadoop.security.authorization, hadoop-policy.xml in the configuration directory) and
// proxy users, with user-to-groups answers cached for hadoop.security.groups.cache.secs.
func newPolicy(opts Options) (*authz.Policy, error) {
	groups, err := authz.GroupsFromConf(opts.Conf, opts.Now)
	if err != nil {
		return nil, err
	}
	groups.TimeLookups(opts.Metrics)
	p, err := authz.NewPolicy(opts.Conf, opts.ConfDir, authz.NMServices, groups)
	if err != nil {
		return nil, fmt.Errorf("nodemanager: service authorization: %w", err)
	}
	return p, nil
}
