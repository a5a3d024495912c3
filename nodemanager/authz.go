package nodemanager

import (
	"fmt"
	"net/http"

	"github.com/bobbin-yarn/bobbin/conf/capacity"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
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
	p, err := authz.NewPolicy(opts.Conf, opts.ConfDir, authz.NMServices, groups)
	if err != nil {
		return nil, fmt.Errorf("nodemanager: service authorization: %w", err)
	}
	return p, nil
}

// logACLs decide who may read an application's container logs on this node's web pages,
// as the Java NM's ContainerLogsUtils.checkAccess: with yarn.acl.enable, a caller who names
// itself (user.name) must be the application's owner, an administrator (yarn.admin.acl) or
// admitted by its VIEW_APP ACL. An anonymous caller is not checked, as in Java's simple
// authentication.
type logACLs struct {
	enabled bool
	admins  capacity.ACL
	groups  *authz.Groups
}

func newLogACLs(opts Options) (logACLs, error) {
	enabled, err := opts.Conf.Bool("yarn.acl.enable")
	if err != nil {
		return logACLs{}, err
	}
	admins, err := opts.Conf.Get("yarn.admin.acl")
	if err != nil {
		return logACLs{}, err
	}
	groups, err := authz.GroupsFromConf(opts.Conf, opts.Now)
	if err != nil {
		return logACLs{}, err
	}
	return logACLs{enabled: enabled, admins: capacity.ParseACL(admins), groups: groups}, nil
}

// mayViewLogs returns why the request may not read app's logs ("" when it may).
func (nm *NodeManager) mayViewLogs(r *http.Request, app records.ApplicationID) string {
	who := r.URL.Query().Get("user.name")
	if !nm.logACLs.enabled || who == "" {
		return ""
	}
	refused := fmt.Sprintf("User [%s] is not authorized to view the logs for application %s", who, app)
	nm.mu.Lock()
	a, ok := nm.apps[app]
	var owner string
	var acls []*yarnpb.ApplicationACLMapProto
	if ok {
		owner, acls = a.user, a.acls
	}
	nm.mu.Unlock()
	if !ok {
		return refused
	}
	if who == owner {
		return ""
	}
	groups := nm.logACLs.groups.Of(who)
	if nm.logACLs.admins.Allows(who, groups) {
		return ""
	}
	for _, e := range acls {
		if e.GetAccessType() == yarnpb.ApplicationAccessTypeProto_APPACCESS_VIEW_APP && capacity.ParseACL(e.GetAcl()).Allows(who, groups) {
			return ""
		}
	}
	return refused
}
