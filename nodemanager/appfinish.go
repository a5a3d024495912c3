package nodemanager

import (
	"os"
	"path/filepath"
	"time"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
)

// finishApp ends an application on this node: its containers are killed, its shuffle
// registration and application resources removed, its work dirs deleted after
// yarn.nodemanager.delete.debug-delay-sec.
func (nm *NodeManager) finishApp(id records.ApplicationID) {
	a, live := nm.table.EndApp(id)
	for _, c := range live {
		nm.kill(c, exitcode.KilledAfterAppCompletion, "Container killed by the ApplicationMaster.")
	}
	if a == nil {
		return
	}
	nm.aux.StopApplication(id)
	nm.local.CleanupApp(a.User, id.String())
	// Logs are aggregated at once; local files, aggregated or not, stay for
	// yarn.nodemanager.delete.debug-delay-sec.
	aggregated := false
	if nm.settings.LogAggregation.Enabled {
		aggregated = nm.logs.Final(a).Status == yarnpb.LogAggregationStatusProto_LOG_SUCCEEDED
	}
	if d := nm.settings.DebugDelay; d > 0 {
		select {
		case <-nm.ctx.Done():
			return
		case <-time.After(d):
		}
	}
	for _, l := range nm.settings.LocalDirs {
		os.RemoveAll(filepath.Join(l, "usercache", a.User, "appcache", id.String()))
	}
	nm.table.ForgetApp(id)
	nm.log.WithField("application", id.String()).Info("application finished on this node; cleaned up")
	if aggregated {
		for _, l := range nm.settings.LogDirs {
			os.RemoveAll(filepath.Join(l, id.String()))
		}
		nm.log.WithField("application", id.String()).Info("local container logs deleted after aggregation")
		return
	}
	// Without log aggregation (or when it failed), container logs stay
	// yarn.nodemanager.log.retain-seconds.
	nm.log.WithFields(map[string]any{"application": id.String(), "retain": nm.settings.LogRetain.String()}).Info("local container logs kept for yarn.nodemanager.log.retain-seconds")
	select {
	case <-nm.ctx.Done():
		return
	case <-time.After(nm.settings.LogRetain - nm.settings.DebugDelay):
	}
	for _, l := range nm.settings.LogDirs {
		os.RemoveAll(filepath.Join(l, id.String()))
	}
	nm.log.WithField("application", id.String()).Info("application logs deleted after yarn.nodemanager.log.retain-seconds")
}
