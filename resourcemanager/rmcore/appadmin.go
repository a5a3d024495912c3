package rmcore

import (
	"os/user"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
)

// KillApp kills an application for user (the RPC kill and the REST state change): found
// is false when the RM does not know it. diagnostics say who killed it.
func (rm *Core) KillApp(id records.ApplicationID, user, diagnostics string) (found bool) {
	killed, found := rm.Apps.Kill(id, rm.Opts.Now().UnixMilli(), diagnostics)
	if !found {
		return false
	}
	if killed {
		rm.Metrics.AppEnded(yarnpb.YarnApplicationStateProto_KILLED)
	}
	rm.EndApp(id)
	rm.Log.WithFields(map[string]any{"application": id.String(), "user": user}).Info("application killed")
	return true
}

// MayModifyApp applies yarn.acl.enable to changing an application (kill, move, priority):
// its owner, an administrator (yarn.admin.acl), or a user the application's queue (or an
// ancestor) lets administer may. Without ACLs anyone may, as in the Java RM.
func (rm *Core) MayModifyApp(who string, id records.ApplicationID) bool {
	if !rm.Settings.ACLEnabled {
		return true
	}
	var owner, queue string
	rm.Apps.Each(func(a *rmstate.App) {
		if a.ID == id {
			owner, queue = a.User, a.Queue
		}
	})
	if who == owner {
		return true
	}
	groups := UserGroups(who)
	if rm.Settings.AdminACL.Allows(who, groups) {
		return true
	}
	q, ok := rm.Queues().Queue(queue)
	for ; ok && q != nil; q = q.Parent {
		if q.AdministerACL.Allows(who, groups) {
			return true
		}
	}
	return false
}

// UserGroups resolves a user's groups from the local system, as Hadoop's default
// ShellBasedUnixGroupsMapping does.
func UserGroups(name string) []string {
	u, err := user.Lookup(name)
	if err != nil {
		return nil
	}
	ids, err := u.GroupIds()
	if err != nil {
		return nil
	}
	var out []string
	for _, id := range ids {
		if g, err := user.LookupGroupId(id); err == nil {
			out = append(out, g.Name)
		}
	}
	return out
}
