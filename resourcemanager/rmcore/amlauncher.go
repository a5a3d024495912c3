package rmcore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
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
//
// A NodeManager that is not serving this RM yet — restarting, so its RPC port refuses, or
// up but not registered again, so it refuses new containers (NMNotYetReadyException) or
// takes this RM's container token for a previous RM's — is tried again, with a growing
// pause, while the container stays allocated there: once the node registers again the AM
// starts, and if it never does the node is lost and its containers released, which ends
// the attempt uncounted. The Java RM fails the attempt at once, counted, and the next one
// is placed on the same node and fails the same way: an application waiting for room on a
// NodeManager that restarts lost both its attempts (the kill matrix, Apache's NodeManager).
func (rm *Core) launchAM(att records.AttemptID, c *yarnpb.ContainerProto, containerToken *commonpb.TokenProto) {
	rm.tasks.Add(1)
	go func() {
		defer rm.tasks.Done()
		cid := records.ContainerIDFromProto(c.GetId())
		log := rm.log.WithFields(map[string]any{"attempt": att.String(), "container": cid.String(), "node": rmstate.NodeKey(c.GetNodeId())})
		if err := rm.amAllocated(att, c); err != nil {
			log.WithError(err).Info("AM container not launched: its attempt ended meanwhile")
			return
		}
		start := rm.opts.Now()
		deadline := start.Add(rm.settings.NMExpiry)
		for pause := time.Second; ; pause = min(2*pause, 10*time.Second) {
			err := rm.startAMContainer(att, c, containerToken)
			if err == nil {
				// ClusterMetrics' AMLaunchDelay: from the launch's start to its answer.
				rm.metrics.AMLaunchDelay.Update(rm.opts.Now().Sub(start))
				return
			}
			if !nodeNotServing(err) || rm.stopped == nil || rm.opts.Now().After(deadline) {
				log.WithError(err).Warn("AM launch failed")
				rm.AttemptFailed(att, fmt.Sprintf("Error launching %s. Got exception: %v", att, err), exitcode.Invalid)
				return
			}
			log.WithError(err).Info("AM launch: the NodeManager is not serving this ResourceManager yet (restarting?); trying again")
			select {
			case <-rm.stopped:
				return
			case <-time.After(pause):
			}
			if _, live := rm.containers.LiveReport(cid); !live || !rm.apps.WithAttempt(att, func(*rmstate.App, *rmstate.Attempt) {}) {
				return // released meanwhile (the node lost, the application ended): nothing to launch
			}
		}
	}()
}

// nodeNotServing reports whether a launch failed because the NodeManager does not serve
// this RM yet: its port refuses (it is restarting), it refuses new containers until it has
// registered (NMNotYetReadyException), or, restarted and not registered again, it takes
// a container this RM allocated for one of a previous RM's.
func nodeNotServing(err error) bool {
	var re *rpc.RemoteError
	if errors.As(err, &re) {
		return strings.HasSuffix(re.Class, ".NMNotYetReadyException") ||
			strings.HasSuffix(re.Class, ".InvalidContainerException") && strings.Contains(re.Message, "allocated by a previous RM")
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}

// amAllocated records the attempt's AM container: the attempt is ALLOCATED.
func (rm *Core) amAllocated(att records.AttemptID, c *yarnpb.ContainerProto) error {
	cid := records.ContainerIDFromProto(c.GetId())
	err := fmt.Errorf("attempt %s is gone", att)
	rm.apps.WithAttempt(att, func(a *rmstate.App, at *rmstate.Attempt) {
		if err = at.Move(rmstate.AttemptAMAllocated); err == nil {
			at.AMContainer = &cid
			at.AMNode, at.AMNodeHTTP = rmstate.NodeKey(c.GetNodeId()), c.GetNodeHttpAddress()
		}
	})
	return err
}

func (rm *Core) startAMContainer(att records.AttemptID, c *yarnpb.ContainerProto, containerToken *commonpb.TokenProto) error {
	var clc *yarnpb.ContainerLaunchContextProto
	var amToken *token.Token
	var user string
	var submit int64
	var maxAttempts int
	cid := records.ContainerIDFromProto(c.GetId())
	ok := rm.apps.WithAttempt(att, func(a *rmstate.App, at *rmstate.Attempt) {
		if a.AMSpec != nil {
			clc = proto.Clone(a.AMSpec).(*yarnpb.ContainerLaunchContextProto)
		}
		amToken, user, submit, maxAttempts = at.Token, a.User, a.SubmitTime, a.MaxAttempts
	})
	if !ok {
		return fmt.Errorf("attempt %s is gone", att)
	}
	rm.containers.HandOut(cid, rm.opts.Now())
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
	nmTok, err := security.NMTokens{Keys: rm.nmKeys}.Issue(att, c.GetNodeId(), user)
	if err != nil {
		return err
	}
	nm := nmclient.NewProtected(rmstate.NodeKey(c.GetNodeId()), att.String(), nmTok, rm.settings.QOP, rm.opts.Logger)
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
	rm.containers.Launched(cid)
	rm.apps.WithAttempt(att, func(a *rmstate.App, at *rmstate.Attempt) {
		at.Launched, at.LaunchedAt = true, rm.opts.Now()
		if a.LaunchTime == 0 {
			a.LaunchTime = rm.opts.Now().UnixMilli()
		}
		if !at.Registered {
			// The liveness clock starts at launch; an AM that registered already (it can
			// before this answer is handled) has started it itself, later.
			at.LastPing = rm.opts.Now()
		}
		_ = at.Move(rmstate.AttemptAMLaunched) // no move if it ended meanwhile
	})
	rm.log.WithFields(map[string]any{"application": att.App.String(), "attempt": att.String(), "container": records.ContainerIDFromProto(c.GetId()).String(),
		"node": rmstate.NodeKey(c.GetNodeId())}).Info("AM container launched")
	return nil
}
