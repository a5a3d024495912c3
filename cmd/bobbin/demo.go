package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/client/amclient"
	"github.com/bobbin-yarn/bobbin/client/nmclient"
	"github.com/bobbin-yarn/bobbin/client/rmclient"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/token"
)

// The demo is a distributed-shell-like application written with Bobbin's own clients:
// `bobbin demo` submits it and follows it; its AM is `bobbin demo-am`, which the RM starts
// in a container on a NodeManager, and which runs a command in N containers through the
// NodeManagers' ContainerManagementProtocol.

func runDemo(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bobbin demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rmAddr := fs.String("rm", "127.0.0.1:8032", "ResourceManager client address")
	sched := fs.String("scheduler", "127.0.0.1:8030", "ResourceManager scheduler address (for the AM)")
	n := fs.Int("containers", 3, "containers to run the command in")
	command := fs.String("command", "echo hello from $CONTAINER_ID on $(hostname)", "shell command each container runs")
	queue := fs.String("queue", "default", "queue")
	timeout := fs.Duration("timeout", 2*time.Minute, "give up after")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	c := rmclient.New(*rmAddr, currentUser(), rpc.ClientOptions{ConnectRetries: 10})
	defer c.Close()
	na, err := c.GetNewApplication(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "bobbin demo: %v\n", err)
		return 1
	}
	id := na.GetApplicationId()
	// The AM's launch script runs its command as `exec /bin/bash -c "…"`, so the task
	// command passes two shells: single-quoted for the inner one, escaped for the outer
	// double quotes. It reaches the AM verbatim and expands only in each task.
	inner := "'" + strings.ReplaceAll(*command, "'", `'\''`) + "'"
	quoted := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`, "`", "\\`").Replace(inner)
	amCmd := fmt.Sprintf("%s demo-am --scheduler %s --containers %d --command %s 1><LOG_DIR>/AppMaster.stdout 2><LOG_DIR>/AppMaster.stderr",
		self, *sched, *n, quoted)
	err = c.Call(ctx, "submitApplication", &yarnpb.SubmitApplicationRequestProto{ApplicationSubmissionContext: &yarnpb.ApplicationSubmissionContextProto{
		ApplicationId: id, ApplicationName: proto.String("bobbin-demo"), Queue: proto.String(*queue), ApplicationType: proto.String("BOBBIN-DEMO"),
		AmContainerSpec: &yarnpb.ContainerLaunchContextProto{Command: []string{amCmd}},
		Resource:        &yarnpb.ResourceProto{Memory: proto.Int64(256), VirtualCores: proto.Int32(1)}, MaxAppAttempts: proto.Int32(1)}},
		&yarnpb.SubmitApplicationResponseProto{})
	if err != nil {
		fmt.Fprintf(stderr, "bobbin demo: submit: %v\n", err)
		return 1
	}
	appID := records.AppIDFromProto(id)
	fmt.Fprintf(stdout, "submitted %s: %d containers running %q\n", appID, *n, *command)
	last := ""
	for {
		rep, err := c.GetApplicationReport(ctx, id)
		if err != nil {
			fmt.Fprintf(stderr, "bobbin demo: %v\n", err)
			return 1
		}
		st := rep.GetYarnApplicationState().String()
		if st != last {
			fmt.Fprintf(stdout, "%s  %s %s\n", time.Now().Format("15:04:05.000"), appID, st)
			last = st
		}
		switch rep.GetYarnApplicationState() {
		case yarnpb.YarnApplicationStateProto_FINISHED, yarnpb.YarnApplicationStateProto_FAILED, yarnpb.YarnApplicationStateProto_KILLED:
			fmt.Fprintf(stdout, "final status %s: %s\n", rep.GetFinalApplicationStatus(), rep.GetDiagnostics())
			if rep.GetFinalApplicationStatus() == yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED {
				return 0
			}
			return 1
		}
		select {
		case <-ctx.Done():
			fmt.Fprintf(stderr, "bobbin demo: %s still %s after %v\n", appID, st, *timeout)
			return 1
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// runDemoAM is the demo's ApplicationMaster, run by a NodeManager.
func runDemoAM(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bobbin demo-am", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sched := fs.String("scheduler", "127.0.0.1:8030", "ResourceManager scheduler address")
	n := fs.Int("containers", 3, "containers")
	command := fs.String("command", "true", "command")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	log := logrus.New()
	log.SetOutput(stderr)
	entry := logrus.NewEntry(log).WithField("container", os.Getenv("CONTAINER_ID"))
	if err := demoAM(*sched, *n, *command, stdout, entry); err != nil {
		entry.Error(err)
		return 1
	}
	return 0
}

func demoAM(sched string, n int, command string, stdout io.Writer, log *logrus.Entry) error {
	ctx := context.Background()
	cid, err := records.ParseContainerID(os.Getenv("CONTAINER_ID"))
	if err != nil {
		return fmt.Errorf("CONTAINER_ID: %w", err)
	}
	creds, err := token.ReadCredentialsFile(os.Getenv("HADOOP_TOKEN_FILE_LOCATION"))
	if err != nil {
		return err
	}
	tok, err := amclient.AMRMTokenFrom(creds)
	if err != nil {
		return err
	}
	am := amclient.New(amclient.Options{Addr: sched, Token: tok, User: os.Getenv("USER"), Logger: log})
	defer am.Close()
	host, _ := os.Hostname()
	if _, err := am.Register(ctx, host, 0, ""); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "registered %s\n", cid.Attempt)
	am.Request(1, "*", 128, 1, int32(n))
	started, done, failed := 0, 0, 0
	var diags []string
	for done < n {
		resp, err := am.Allocate(ctx, float32(done)/float32(n))
		if err != nil {
			return err
		}
		for _, c := range resp.GetAllocatedContainers() {
			node := fmt.Sprintf("%s:%d", c.GetNodeId().GetHost(), c.GetNodeId().GetPort())
			nm := nmclient.New(node, cid.Attempt.String(), am.NMToken(node), log)
			// The NM runs the command inside `exec /bin/bash -c "…"`: quotes and backslashes
			// are escaped for that context; $ stays live so variables expand per container.
			escaped := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "`", "\\`").Replace(command)
			clc := &yarnpb.ContainerLaunchContextProto{Command: []string{escaped + " 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr"}}
			_, err := nm.Start(ctx, clc, c)
			nm.Close()
			if err != nil {
				return fmt.Errorf("start %s on %s: %w", records.ContainerIDFromProto(c.GetId()), node, err)
			}
			started++
			fmt.Fprintf(stdout, "started %s on %s\n", records.ContainerIDFromProto(c.GetId()), node)
		}
		for _, st := range resp.GetCompletedContainerStatuses() {
			done++
			id := records.ContainerIDFromProto(st.GetContainerId())
			fmt.Fprintf(stdout, "%s exited %d\n", id, st.GetExitStatus())
			if st.GetExitStatus() != 0 {
				failed++
				diags = append(diags, fmt.Sprintf("%s exited %d: %s", id, st.GetExitStatus(), st.GetDiagnostics()))
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	status, msg := yarnpb.FinalApplicationStatusProto_APP_SUCCEEDED, fmt.Sprintf("%d of %d containers succeeded", n-failed, n)
	if failed > 0 {
		status, msg = yarnpb.FinalApplicationStatusProto_APP_FAILED, msg+"; "+strings.Join(diags, "; ")
	}
	fmt.Fprintln(stdout, msg)
	return am.Finish(ctx, status, msg, "")
}
