package nodemanager

import (
	"testing"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
)

// A heartbeat answer without acknowledgements leaves completed containers alone: one that
// completed while the heartbeat was on the wire has not been reported yet (this lost
// completions, and with them an AM's last container or an attempt's AM container).
func TestForgetCompletedOnlyWhatTheRMAcknowledged(t *testing.T) {
	app := records.ApplicationID{ClusterTimestamp: 1, ID: 1}.Attempt(1)
	done := records.ContainerID{Attempt: app, ID: 2}
	acked := records.ContainerID{Attempt: app, ID: 3}
	running := records.ContainerID{Attempt: app, ID: 4}
	nm := &NodeManager{containers: map[records.ContainerID]*nmContainer{
		done:    {id: done, state: yarnpb.ContainerStateProto_C_COMPLETE},
		acked:   {id: acked, state: yarnpb.ContainerStateProto_C_COMPLETE, reported: true},
		running: {id: running, state: yarnpb.ContainerStateProto_C_RUNNING},
	}}
	nm.forgetCompleted(nil)
	if len(nm.containers) != 3 {
		t.Fatalf("an answer without acknowledgements dropped containers: %v", nm.containers)
	}
	// The RM acknowledges only what it had; a running container is never dropped.
	nm.forgetCompleted([]*yarnpb.ContainerIdProto{acked.Proto(), running.Proto()})
	if _, ok := nm.containers[acked]; ok || len(nm.containers) != 2 {
		t.Fatalf("after acknowledging %s: %v", acked, nm.containers)
	}
	statuses, completed := nm.containerStatuses()
	if len(statuses) != 2 || len(completed) != 1 || completed[0].id != done {
		t.Fatalf("statuses %v, completed to report %v", statuses, completed)
	}
	// A resync drops every completed container, and only those.
	nm.forgetAllCompleted()
	if _, ok := nm.containers[running]; !ok || len(nm.containers) != 1 {
		t.Fatalf("after a resync: %v", nm.containers)
	}
}
