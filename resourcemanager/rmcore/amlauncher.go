package rmcore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/client/nmclient"
	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmstate"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/token"
	"github.com/bobbin-yarn/bobbin/yarn/exitcode"
	"github.com/bobbin-yarn/bobbin/yarn/security"
)

// launchAM starts a managed AM's container on its NodeManager in the background, as the
// Java RM's AMLauncher does (protocol.md §3.5): the submitted launch context with the
// attempt's AMRMToken added to its credentials (alias "", service "", token storage v0) and
// the RM's environment, sent with an NMToken for (attempt, node), as user = attempt id.
func (rm *Core) launchAM(att records.AttemptID, c *yarnpb.ContainerProto, containerToken *commonpb.TokenProto) {
	rm.tasks.Add(1)
	go func() {
		defer rm.tasks.Done()
		if err := rm.startAMContainer(att, c, containerToken); err != nil {
			rm.Log.WithError(err).WithFields(map[string]any{"attempt": att.String(), "container": records.ContainerIDFromProto(c.GetId()).String()}).Warn("AM launch failed")
			rm.AttemptFailed(att, fmt.Sprintf("Error launching %s. Got exception: %v", att, err), exitcode.Invalid)
		}
	}()
}

func (rm *Core) startAMContainer(att records.AttemptID, c *yarnpb.ContainerProto, containerToken *commonpb.TokenProto) error {
	var clc *yarnpb.ContainerLaunchContextProto
	var amToken *token.Token
	var user string
	var submit int64
	var maxAttempts int
	cid := records.ContainerIDFromProto(c.GetId())
	ok := rm.Apps.WithAttempt(att, func(a *rmstate.App, at *rmstate.Attempt) {
		if a.AMSpec != nil {
			clc = proto.Clone(a.AMSpec).(*yarnpb.ContainerLaunchContextProto)
		}
		amToken, user, submit, maxAttempts = at.Token, a.User, a.SubmitTime, a.MaxAttempts
		at.AMContainer = &cid
		at.AMNode, at.AMNodeHTTP = rmstate.NodeKey(c.GetNodeId()), c.GetNodeHttpAddress()
		at.State = yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_ALLOCATED
	})
	if !ok {
		return fmt.Errorf("attempt %s is gone", att)
	}
	rm.Containers.HandOut(cid, rm.Opts.Now())
	if clc == nil {
		clc = &yarnpb.ContainerLaunchContextProto{}
	}
	creds := token.NewCredentials()
	if len(clc.GetTokens()) > 0 {
		parsed, err := token.ReadCredentials(clc.GetTokens())
		if err != nil {
			return fmt.Errorf("the submitted launch context's tokens: %w", err)
		}
		creds = parsed
	}
	creds.Tokens[""] = amToken
	clc.Tokens = creds.Bytes()
	for k, v := range map[string]string{
		"APPLICATION_WEB_PROXY_BASE": "/proxy/" + att.App.String(),
		"APP_SUBMIT_TIME_ENV":        strconv.FormatInt(submit, 10),
		"MAX_APP_ATTEMPTS":           strconv.Itoa(maxAttempts),
	} {
		clc.Environment = append(clc.Environment, &yarnpb.StringStringMapProto{Key: proto.String(k), Value: proto.String(v)})
	}
	nmTok, err := security.NMTokens{Keys: rm.NMKeys}.Issue(att, c.GetNodeId(), user)
	if err != nil {
		return err
	}
	nm := nmclient.NewProtected(rmstate.NodeKey(c.GetNodeId()), att.String(), nmTok, rm.Settings.QOP, rm.Opts.Logger)
	defer nm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	launch := proto.Clone(c).(*yarnpb.ContainerProto)
	launch.ContainerToken = containerToken
	if _, err := nm.Start(ctx, clc, launch); err != nil {
		// The diagnostics name the Java exception as the Java RM's do ("class: message").
		var re *rpc.RemoteError
		if errors.As(err, &re) {
			return re
		}
		return err
	}
	// Started by the NodeManager's answer: no expiry while its heartbeat is on its way.
	rm.Containers.Launched(cid)
	rm.Apps.WithAttempt(att, func(a *rmstate.App, at *rmstate.Attempt) {
		at.Launched = true
		if !at.Registered {
			// The liveness clock starts at launch; an AM that registered already (it can
			// before this answer is handled) has started it itself, later.
			at.LastPing = rm.Opts.Now()
		}
		if at.State == yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_ALLOCATED {
			at.State = yarnpb.YarnApplicationAttemptStateProto_APP_ATTEMPT_LAUNCHED
		}
	})
	rm.Log.WithFields(map[string]any{"application": att.App.String(), "attempt": att.String(), "container": records.ContainerIDFromProto(c.GetId()).String(),
		"node": rmstate.NodeKey(c.GetNodeId())}).Info("AM container launched")
	return nil
}
