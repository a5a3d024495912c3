package rmstate

import (
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
)

// What clients see of applications and attempts: their reports (protocol.md §7.2) and
// the tracking URLs in them.

// trackingURL is what reports give as an attempt's tracking URL: the web proxy's page
// for the application, or an unmanaged AM's own URL; an attempt that ended without
// unregistering (killed, failed) has the RM's application page, as in the Java RM.
func (at *Attempt) trackingURL(a *App, web webBases) string {
	if u, ok := at.rmPage(a, web); ok {
		return u
	}
	if a.Unmanaged || web.proxy == "" {
		return cmpOrString(at.TrackingURL, "N/A")
	}
	return web.proxy + "/proxy/" + a.ID.String() + "/"
}

// originalURL is the URL the proxy follows: what the AM registered (N/A for none), or
// the RM's application page for an attempt that ended without unregistering.
func (at *Attempt) originalURL(a *App, web webBases) string {
	if u, ok := at.rmPage(a, web); ok {
		return u
	}
	return cmpOrString(at.TrackingURL, "N/A")
}

func (at *Attempt) rmPage(a *App, web webBases) (string, bool) {
	if !at.Ended() || at.Unregistered || web.rm == "" {
		return "", false
	}
	return web.rm + "/cluster/app/" + a.ID.String(), true
}

// SetWebBases sets the "http://host:port" of the web proxy tracking URLs point to and of
// the RM's web pages (an application's page is the tracking URL of an attempt that ended
// without unregistering).
func (r *Apps) SetWebBases(proxy, rm string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.web = webBases{proxy: proxy, rm: rm}
}

// webBases are where tracking URLs point: the web proxy and the RM's own pages.
type webBases struct{ proxy, rm string }

// report is the ApplicationReport clients see (protocol.md §7.2): before an AM
// registers, host "N/A", rpc port -1, final status UNDEFINED.
func (a *App) report(now time.Time, web webBases, la LogAggregationSettings) *yarnpb.ApplicationReportProto {
	r := &yarnpb.ApplicationReportProto{
		ApplicationId:          a.ID.Proto(),
		User:                   proto.String(a.User),
		Queue:                  proto.String(a.Queue),
		Name:                   proto.String(a.Name),
		Host:                   proto.String("N/A"),
		RpcPort:                proto.Int32(-1),
		YarnApplicationState:   a.State().Enum(),
		TrackingUrl:            proto.String("N/A"),
		Diagnostics:            proto.String(a.Diagnostics),
		StartTime:              proto.Int64(a.StartTime),
		LaunchTime:             proto.Int64(a.LaunchTime),
		FinishTime:             proto.Int64(a.FinishTime),
		FinalApplicationStatus: a.Final.Enum(),
		Progress:               proto.Float32(progressOf(a)),
		ApplicationType:        proto.String(a.AppType),
		ApplicationTags:        append([]string(nil), a.Tags...),
		Priority:               &yarnpb.PriorityProto{Priority: proto.Int32(a.Priority)},
		SubmitTime:             proto.Int64(a.SubmitTime),
		AppResource_Usage:      &yarnpb.ApplicationResourceUsageReportProto{NumUsedContainers: proto.Int32(0), NumReservedContainers: proto.Int32(0)},
		AppTimeouts:            a.timeoutReports(now),
		LogAggregationStatus:   a.logAggregationStatus(now, la).Enum(),
		UnmanagedApplication:   proto.Bool(a.Unmanaged),
		AppNodeLabelExpression: proto.String(labelReport(a.LabelExpr)),
		// The Java RM gives the AM request the default partition when nothing was asked.
		AmNodeLabelExpression: proto.String(labelReport(cmpOr(a.AMLabelExpr, ""))),
	}
	if at := a.Attempt; at != nil {
		r.CurrentApplicationAttemptId = at.ID.Proto()
		// As in the Java RM, an attempt's tracking URL is the web proxy's page for the
		// application from the start (the proxy sends the caller to the RM's application
		// page until the AM registers one); the original is what the AM registered, N/A
		// before. An unmanaged AM is not proxied.
		r.TrackingUrl, r.OriginalTrackingUrl = proto.String(at.trackingURL(a, web)), proto.String(at.originalURL(a, web))
		if at.Registered && a.State() != yarnpb.YarnApplicationStateProto_KILLED {
			// From registration on, clients reach the AM at what it registered.
			r.Host, r.RpcPort = proto.String(at.Host), proto.Int32(at.RPCPort)
		}
		if a.Unmanaged && !a.Finished() && at.Token != nil {
			// An unmanaged AM is run by the client, which takes its AMRMToken from here.
			r.AmRmToken = at.Token.Proto()
		}
	}
	return r
}

// labelReport is how the Java RM reports a node-label expression: "<Not set>" when none
// was given, "<DEFAULT_PARTITION>" when it is empty.
func labelReport(e *string) string {
	switch {
	case e == nil:
		return "<Not set>"
	case strings.TrimSpace(*e) == "":
		return "<DEFAULT_PARTITION>"
	}
	return *e
}

// cmpOr is p, or a pointer to def when p is nil.
func cmpOr(p *string, def string) *string {
	if p == nil {
		return &def
	}
	return p
}

// cmpOrString is s, or def when s is empty.
func cmpOrString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// progressOf is the application's progress as its AM last reported it; a finished,
// failed or killed application shows 100%, as from the Java RM.
func progressOf(a *App) float32 {
	if a.Finished() {
		return 1
	}
	if a.Attempt != nil {
		return a.Attempt.Progress
	}
	return 0
}

// ReportOf returns a copy of an application's report.
func (r *Apps) ReportOf(id records.ApplicationID) (*yarnpb.ApplicationReportProto, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.apps[id]
	if !ok {
		return nil, false
	}
	return a.report(r.now(), r.web, r.logAgg), true
}

// AttemptReport reports one attempt of an application, current or past.
func (r *Apps) AttemptReport(att records.AttemptID) (*yarnpb.ApplicationAttemptReportProto, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.apps[att.App]
	if !ok {
		return nil, false
	}
	for _, at := range a.Attempts {
		if at.ID == att {
			return at.report(a, r.web), true
		}
	}
	return nil, false
}

// AttemptReports reports every attempt of an application, oldest first.
func (r *Apps) AttemptReports(id records.ApplicationID) []*yarnpb.ApplicationAttemptReportProto {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.apps[id]
	if !ok {
		return nil
	}
	out := make([]*yarnpb.ApplicationAttemptReportProto, 0, len(a.Attempts))
	for _, at := range a.Attempts {
		out = append(out, at.report(a, r.web))
	}
	return out
}

func (at *Attempt) report(a *App, web webBases) *yarnpb.ApplicationAttemptReportProto {
	host, port := "N/A", int32(-1)
	if at.Registered {
		host, port = at.Host, at.RPCPort
	}
	r := &yarnpb.ApplicationAttemptReportProto{
		ApplicationAttemptId:        at.ID.Proto(),
		Host:                        proto.String(host),
		RpcPort:                     proto.Int32(port),
		TrackingUrl:                 proto.String(at.trackingURL(a, web)),
		OriginalTrackingUrl:         proto.String(at.originalURL(a, web)),
		Diagnostics:                 proto.String(at.Diagnostics),
		YarnApplicationAttemptState: at.State().Enum(),
		StartTime:                   proto.Int64(at.StartTime),
		FinishTime:                  proto.Int64(at.FinishTime),
	}
	if at.AMContainer != nil {
		r.AmContainerId = at.AMContainer.Proto()
	}
	return r
}

// timeoutReports are ApplicationReport.appTimeouts: every timeout type, UNLIMITED / -1
// unless the application has one, then its expiry and the seconds left (the Java RM
// shows them for a finished application too).
func (a *App) timeoutReports(now time.Time) []*yarnpb.AppTimeoutsMapProto {
	t := yarnpb.ApplicationTimeoutTypeProto_APP_TIMEOUT_LIFETIME
	r := &yarnpb.ApplicationTimeoutProto{ApplicationTimeoutType: t.Enum(), ExpireTime: proto.String(timeoutUnlimited), RemainingTime: proto.Int64(timeoutUnknown)}
	if exp, ok := a.Timeouts[t]; ok {
		r.ExpireTime = proto.String(time.UnixMilli(exp).Format(ISO8601))
		r.RemainingTime = proto.Int64(max(0, exp-now.UnixMilli()) / 1000)
	}
	return []*yarnpb.AppTimeoutsMapProto{{ApplicationTimeoutType: t.Enum(), ApplicationTimeout: r}}
}
