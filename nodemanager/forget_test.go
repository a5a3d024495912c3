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

// A container still localizing is RUNNING on the wire, as the Java NM reports it: the
// 2.7 RM takes any other state in a heartbeat for a finished container and told the AM
// its just-started maps had completed. 3.x readers get the stage in the sub-state.
func TestLocalizingContainerIsReportedRunning(t *testing.T) {
	app := records.ApplicationID{ClusterTimestamp: 1, ID: 1}.Attempt(1)
	ids := []records.ContainerID{{Attempt: app, ID: 1}, {Attempt: app, ID: 2}, {Attempt: app, ID: 3}, {Attempt: app, ID: 4}}
	nm := &NodeManager{containers: map[records.ContainerID]*nmContainer{
		ids[0]: {id: ids[0], state: yarnpb.ContainerStateProto_C_NEW},
		ids[1]: {id: ids[1], state: yarnpb.ContainerStateProto_C_RUNNING},
		ids[2]: {id: ids[2], state: yarnpb.ContainerStateProto_C_RUNNING, killExit: -105},
		ids[3]: {id: ids[3], state: yarnpb.ContainerStateProto_C_COMPLETE},
	}}
	want := []struct {
		state yarnpb.ContainerStateProto
		sub   yarnpb.ContainerSubStateProto
	}{
		{yarnpb.ContainerStateProto_C_RUNNING, yarnpb.ContainerSubStateProto_CSS_SCHEDULED},
		{yarnpb.ContainerStateProto_C_RUNNING, yarnpb.ContainerSubStateProto_CSS_RUNNING},
		{yarnpb.ContainerStateProto_C_RUNNING, yarnpb.ContainerSubStateProto_CSS_COMPLETING},
		{yarnpb.ContainerStateProto_C_COMPLETE, yarnpb.ContainerSubStateProto_CSS_DONE},
	}
	statuses, _ := nm.containerStatuses()
	reg := nm.registrationStatuses()
	if len(statuses) != 4 || len(reg) != 4 {
		t.Fatalf("statuses %v, registration %v", statuses, reg)
	}
	for i, w := range want {
		if st := statuses[i]; st.GetState() != w.state || st.GetContainerSubState() != w.sub {
			t.Errorf("%s: heartbeat says %v/%v, want %v/%v", ids[i], st.GetState(), st.GetContainerSubState(), w.state, w.sub)
		}
		if st := reg[i]; st.GetContainerState() != w.state {
			t.Errorf("%s: registration says %v, want %v", ids[i], st.GetContainerState(), w.state)
		}
	}
}
