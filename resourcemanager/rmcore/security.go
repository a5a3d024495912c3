package rmcore

import (
	"fmt"
	"sync/atomic"
	"time"

	metrics "github.com/rcrowley/go-metrics"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/conf/capacity"
	"github.com/bobbin-yarn/bobbin/yarn/authz"
)

// Security is the RM's authorization state that outlives a core (an HA RM builds a core
// each time it becomes active) and that the `yarn rmadmin -refresh*` calls change: the
// user-to-groups cache, the IPC policy (service ACLs, proxy users) and yarn.admin.acl.
type Security struct {
	Groups *authz.Groups
	Policy *authz.Policy
	admin  atomic.Pointer[capacity.ACL]
	// ShortName maps a Kerberos principal to a user name (hadoop.security.auth_to_local);
	// nil without Kerberos, where names are users already. Set once at start.
	ShortName func(principal string) (string, error)
}

// NewSecurity reads the RM's authorization settings from c and confDir's hadoop-policy.xml;
// reg (when not nil) times the group lookups.
func NewSecurity(c *conf.Configuration, confDir string, now func() time.Time, reg metrics.Registry) (*Security, error) {
	groups, err := authz.GroupsFromConf(c, now)
	if err != nil {
		return nil, err
	}
	groups.TimeLookups(reg)
	s := &Security{Groups: groups}
	if s.Policy, err = authz.NewPolicy(c, confDir, authz.RMServices, s.Groups); err != nil {
		return nil, fmt.Errorf("service authorization: %w", err)
	}
	if err := s.setAdmins(c); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Security) setAdmins(c *conf.Configuration) error {
	v, err := c.Get("yarn.admin.acl")
	if err != nil {
		return err
	}
	acl := capacity.ParseACL(v)
	s.admin.Store(&acl)
	return nil
}

// Admins is yarn.admin.acl as last read.
func (s *Security) Admins() capacity.ACL { return *s.admin.Load() }

// reloadSite reads the configuration directory again (core-site.xml and yarn-site.xml), as
// the Java AdminService does for each refresh; without a directory there is nothing to
// re-read and the start-up configuration stands.
func (rm *Core) reloadSite() (*conf.Configuration, error) {
	if rm.opts.ConfDir == "" {
		return rm.opts.Conf, nil
	}
	c, _, err := conf.LoadDir(rm.opts.ConfDir)
	return c, err
}

// RefreshAdminACLs re-reads yarn.admin.acl (`rmadmin -refreshAdminAcls`).
func (rm *Core) RefreshAdminACLs() error {
	c, err := rm.reloadSite()
	if err != nil {
		return err
	}
	if err := rm.opts.Security.setAdmins(c); err != nil {
		return err
	}
	rm.log.WithField("admin_acl", rm.opts.Security.Admins().String()).Info("admin ACL refreshed")
	return nil
}

// RefreshServiceACLs re-reads hadoop-policy.xml (`rmadmin -refreshServiceAcl`); Java
// refuses it while service authorization is off.
func (rm *Core) RefreshServiceACLs() error {
	c, err := rm.reloadSite()
	if err != nil {
		return err
	}
	if err := rm.opts.Security.Policy.ReloadServiceACLs(c); err != nil {
		return err
	}
	rm.log.Info("service ACLs refreshed")
	return nil
}

// RefreshProxyUsers re-reads hadoop.proxyuser.* (`rmadmin -refreshSuperUserGroupsConfiguration`).
func (rm *Core) RefreshProxyUsers() error {
	c, err := rm.reloadSite()
	if err != nil {
		return err
	}
	if err := rm.opts.Security.Policy.ReloadProxyUsers(c); err != nil {
		return err
	}
	rm.log.Info("proxy users refreshed")
	return nil
}

// RefreshGroups drops the user-to-groups cache (`rmadmin -refreshUserToGroupsMappings`).
func (rm *Core) RefreshGroups() {
	rm.opts.Security.Groups.Refresh()
	rm.log.Info("user-to-groups mappings refreshed")
}

// UserGroups is user's groups through the RM's cached mapping.
func (rm *Core) UserGroups(name string) []string { return rm.opts.Security.Groups.Of(name) }
