package nodemanager

import (
	"fmt"
	"net/http"

	"github.com/bobbin-yarn/bobbin/conf/capacity"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/yarn/authz"
	"github.com/bobbin-yarn/bobbin/yarn/kerberos"
	"github.com/bobbin-yarn/bobbin/yarn/webuser"
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
// as the Java NM's ContainerLogsUtils.checkAccess: with yarn.acl.enable, the caller must be
// the application's owner, an administrator (yarn.admin.acl) or admitted by its VIEW_APP
// ACL. On a simple cluster an anonymous caller is not checked (simple authentication); on
// a kerberized one an unauthenticated caller is the static web user (yarn/webuser), held
// to the same rules, which do not name it.
type logACLs struct {
	enabled bool
	secure  bool // hadoop.security.authentication=kerberos
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
	secure, err := kerberos.Enabled(opts.Conf)
	if err != nil {
		return logACLs{}, err
	}
	return logACLs{enabled: enabled, secure: secure, admins: capacity.ParseACL(admins), groups: groups}, nil
}

// isAdmin: user is in yarn.admin.acl (the web port's administrator pages).
func (l logACLs) isAdmin(user string) bool { return l.admins.Allows(user, l.groups.Of(user)) }

// mayViewLogs returns why the request may not read app's logs ("" when it may).
func (nm *NodeManager) mayViewLogs(r *http.Request, app records.ApplicationID) string {
	caller := webuser.From(r)
	if !nm.logACLs.enabled || !caller.Authenticated && !nm.logACLs.secure {
		return ""
	}
	who := caller.Name
	refused := fmt.Sprintf("User [%s] is not authorized to view the logs for application %s", who, app)
	a, ok := nm.table.App(app)
	if !ok {
		return refused
	}
	if who == a.User && caller.Authenticated {
		return ""
	}
	groups := nm.logACLs.groups.Of(who)
	if nm.logACLs.admins.Allows(who, groups) && caller.Authenticated {
		return ""
	}
	for _, e := range a.ACLs {
		if e.GetAccessType() == yarnpb.ApplicationAccessTypeProto_APPACCESS_VIEW_APP && capacity.ParseACL(e.GetAcl()).Allows(who, groups) {
			return ""
		}
	}
	return refused
}
