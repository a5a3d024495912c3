package nmweb

import (
	"fmt"
	"net/http"
	"time"

	metrics "github.com/rcrowley/go-metrics"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/conf/capacity"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/yarn/aggregatedlog"
	"github.com/bobbin-yarn/bobbin/yarn/authz"
	"github.com/bobbin-yarn/bobbin/yarn/kerberos"
	"github.com/bobbin-yarn/bobbin/yarn/webuser"
)

// LogACLs decide who may read an application's container logs on this node's web pages,
// as the Java NM's ContainerLogsUtils.checkAccess: with yarn.acl.enable, the caller must be
// the application's owner, an administrator (yarn.admin.acl) or admitted by its VIEW_APP
// ACL. On a simple cluster an anonymous caller is not checked (simple authentication); on
// a kerberized one an unauthenticated caller is the static web user (yarn/webuser), held
// to the same rules, which do not name it.
type LogACLs struct {
	enabled bool
	secure  bool // hadoop.security.authentication=kerberos
	admins  capacity.ACL
	groups  *authz.Groups
}

func ReadLogACLs(c *conf.Configuration, now func() time.Time, reg metrics.Registry) (LogACLs, error) {
	enabled, err := c.Bool("yarn.acl.enable")
	if err != nil {
		return LogACLs{}, err
	}
	admins, err := c.Get("yarn.admin.acl")
	if err != nil {
		return LogACLs{}, err
	}
	groups, err := authz.GroupsFromConf(c, now)
	if err != nil {
		return LogACLs{}, err
	}
	groups.TimeLookups(reg)
	secure, err := kerberos.Enabled(c)
	if err != nil {
		return LogACLs{}, err
	}
	return LogACLs{enabled: enabled, secure: secure, admins: capacity.ParseACL(admins), groups: groups}, nil
}

// IsAdmin: user is in yarn.admin.acl (the web port's administrator pages).
func (l LogACLs) IsAdmin(user string) bool { return l.admins.Allows(user, l.groups.Of(user)) }

// mayViewLogs returns why the request may not read app's logs ("" when it may).
func (s *server) mayViewLogs(r *http.Request, app records.ApplicationID) string {
	a, ok := s.Table.App(app)
	if !ok {
		return s.mayView(r, app, "", nil, false)
	}
	var views []string
	for _, e := range a.ACLs {
		if e.GetAccessType() == yarnpb.ApplicationAccessTypeProto_APPACCESS_VIEW_APP {
			views = append(views, e.GetAcl())
		}
	}
	return s.mayView(r, app, a.User, views, true)
}

// mayViewAggregated is mayViewLogs for logs read from their aggregated file, whose
// owner and ACLs (AggregatedLogFormat's) decide, as the Java log servlets' do.
func (s *server) mayViewAggregated(r *http.Request, app records.ApplicationID, f *aggregatedlog.Found) string {
	var views []string
	for _, a := range f.ACLs {
		if a.Type == "VIEW_APP" {
			views = append(views, a.ACL)
		}
	}
	return s.mayView(r, app, f.Owner, views, true)
}

// mayView decides for an application of owner whose VIEW_APP ACLs are views (known:
// the node knows the application).
func (s *server) mayView(r *http.Request, app records.ApplicationID, owner string, views []string, known bool) string {
	caller := webuser.From(r)
	if !s.LogACLs.enabled || !caller.Authenticated && !s.LogACLs.secure {
		return ""
	}
	who := caller.Name
	refused := fmt.Sprintf("User [%s] is not authorized to view the logs for application %s", who, app)
	if !known {
		return refused
	}
	if who == owner && caller.Authenticated {
		return ""
	}
	groups := s.LogACLs.groups.Of(who)
	if s.LogACLs.admins.Allows(who, groups) && caller.Authenticated {
		return ""
	}
	for _, acl := range views {
		if capacity.ParseACL(acl).Allows(who, groups) {
			return ""
		}
	}
	return refused
}
