package rmweb

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/bobbin-yarn/bobbin/conf"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/yarn/aggregatedlog"
	"github.com/bobbin-yarn/bobbin/yarn/remotefs"
	"github.com/bobbin-yarn/bobbin/yarn/webui"
)

// A container's logs served by the RM itself, from its application's aggregated logs
// (/cluster/logs/<container>/<user>[/<file>]): the UI links there once the NodeManager
// that ran the container has left the cluster (lost, decommissioned, shut down), where
// the Java RM's link leads to a host that no longer answers. While the NodeManager is up
// the UI links to it, as Java's does (it reads the aggregated logs itself once its local
// ones are gone).

// aggregatedLogs is where the cluster's NodeManagers aggregate logs to, as the RM's
// configuration says (the same keys as theirs).
type aggregatedLogs struct {
	enabled   bool
	fs, root  string
	locations []aggregatedlog.Location
	err       error // why they cannot be read, though enabled

	reads chan struct{} // a read holds up to aggregatedlog.MaxFileBytes: two at a time
}

func readAggregatedLogs(c *conf.Configuration) *aggregatedLogs {
	a := &aggregatedLogs{reads: make(chan struct{}, 2)}
	if a.enabled, a.err = c.Bool("yarn.log-aggregation-enable"); a.err != nil || !a.enabled {
		return a
	}
	a.locations, a.fs, a.root, a.err = aggregatedlog.Remote(c)
	return a
}

// find reads a container's logs from its application's directory, in whichever layout
// put them there.
func (a *aggregatedLogs) find(c *conf.Configuration, id records.ContainerID, user string) (*aggregatedlog.Found, string, error) {
	if !a.enabled {
		return nil, "", errors.New("log aggregation is off (yarn.log-aggregation-enable): only the NodeManager that ran the container had its logs")
	}
	if a.err != nil {
		return nil, "", a.err
	}
	select {
	case a.reads <- struct{}{}:
		defer func() { <-a.reads }()
	default:
		return nil, "", errors.New("the ResourceManager is reading other aggregated logs; try again")
	}
	fs, err := remotefs.Open(c, a.fs, user)
	if err != nil {
		return nil, "", err
	}
	defer fs.Close()
	var first error // the layout in force's answer says where it looked
	for _, l := range a.locations {
		dir := l.AppDir(a.root, user, id.Attempt.App)
		f, err := aggregatedlog.ContainerLogs(fs, dir, id.String(), "")
		if err == nil {
			return f, fs.URI(dir), nil
		}
		if !errors.Is(err, aggregatedlog.ErrNoLogs) {
			return nil, "", err
		}
		if first == nil {
			first = err
		}
	}
	return nil, "", first
}

// containerLogs is /cluster/logs/{id}/{user}[/{file}]: the container's log files, and one
// of them (the last 4 KiB unless start says otherwise, as the NodeManager's page).
func (u *ui) containerLogs(w http.ResponseWriter, r *http.Request) {
	raw, user, file := r.PathValue("id"), r.PathValue("user"), r.PathValue("file")
	id, err := records.ParseContainerID(raw)
	if err != nil {
		u.render(w, http.StatusBadRequest, "logs", "Container logs", "", map[string]any{"Missing": "Invalid container id " + raw + ": " + err.Error()})
		return
	}
	title := "Logs of " + id.String()
	data := map[string]any{"Container": id.String(), "User": user}
	if !webui.ValidUser(user) {
		data["Missing"] = "Invalid user name " + user
		u.render(w, http.StatusBadRequest, "logs", title, "", data)
		return
	}
	// An application the RM still knows: its ACLs decide, and its owner is the user.
	rep, known := u.rm.AppReport(id.Attempt.App)
	if known {
		if !u.viewable(w, r, id.Attempt.App) {
			return
		}
		if rep.GetUser() != user {
			data["Missing"] = fmt.Sprintf("%s belongs to %s's application, not %s's.", id, rep.GetUser(), user)
			u.render(w, http.StatusNotFound, "logs", title, "", data)
			return
		}
	}
	found, where, err := u.aggLogs.find(u.rm.Conf(), id, user)
	if err != nil {
		data["Missing"] = "No aggregated logs of " + id.String() + ": " + err.Error() + "."
		if !known && !u.rm.MayViewLogsOf(callerOf(r), user, nil) {
			// Where they are, or whether there are any, is for those who may read them.
			data["Missing"] = "No aggregated logs of " + id.String() + " that you may read."
		}
		u.render(w, http.StatusNotFound, "logs", title, "", data)
		return
	}
	// One the RM has forgotten: the owner and ACLs its aggregated file records decide.
	if !known {
		var views []string
		for _, a := range found.ACLs {
			if a.Type == "VIEW_APP" { // AggregatedLogFormat's name of ApplicationAccessType.VIEW_APP
				views = append(views, a.ACL)
			}
		}
		if !u.rm.MayViewLogsOf(callerOf(r), found.Owner, views) {
			u.render(w, http.StatusForbidden, "failure", "Not authorized", "",
				fmt.Sprintf("User [%s] is not authorized to view the logs for application %s", callerOf(r), id.Attempt.App))
			return
		}
	}
	data["Aggregated"], data["Nodes"] = where, strings.Join(found.Files, ", ")
	if !webui.AggregatedLogPage(data, found.Logs, file, r) {
		data["Missing"] = "No log file " + file + " of " + id.String() + " in its aggregated logs."
		u.render(w, http.StatusNotFound, "logs", title, "", data)
		return
	}
	u.render(w, http.StatusOK, "logs", title, "", data)
}

// reachableAttempts are the application's attempts, their AM logs linked where they can
// be read.
func (u *ui) reachableAttempts(rep *yarnpb.ApplicationReportProto) []appAttemptInfo {
	list := u.attemptInfos(rep)
	for i := range list {
		list[i].LogsLink = u.reachableLogs(list[i].LogsLink, list[i].NodeID)
	}
	return list
}

// nodeUp says a node's NodeManager answers its web port (it may be unhealthy or
// draining, but it is there).
func nodeUp(s yarnpb.NodeStateProto) bool {
	switch s {
	case yarnpb.NodeStateProto_NS_RUNNING, yarnpb.NodeStateProto_NS_UNHEALTHY, yarnpb.NodeStateProto_NS_DECOMMISSIONING, yarnpb.NodeStateProto_NS_NEW:
		return true
	}
	return false
}

// reachableLogs is where the UI links a container's logs whose NodeManager page is nmLink
// (http://<node>/node/containerlogs/<container>/<user>) on node: there while that
// NodeManager is in the cluster, else the RM's own page over the aggregated logs (when
// there are any to read).
func (u *ui) reachableLogs(nmLink, node string) string {
	const nmPath = "/node/containerlogs/"
	i := strings.Index(nmLink, nmPath)
	if i < 0 || !u.aggLogs.enabled {
		return nmLink
	}
	if n, ok := u.rm.NodeSnapshot(node); ok && nodeUp(n.State()) {
		return nmLink
	}
	return "/cluster/logs/" + nmLink[i+len(nmPath):]
}
