package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/user"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/bobbin-yarn/bobbin/client/rmclient"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc"
)

const clientUsage = `usage: bobbin client [--rm HOST:PORT] [--user NAME] <query>

queries:
  cluster              node managers and nodes
  new-application      ask for an application id
  queue NAME           describe a queue
  app APPLICATION_ID   report an application
  apps                 list applications
  kill APPLICATION_ID  kill an application
`

// runClient is a small YARN client over Bobbin's own IPC client, for demos and checks.
func runClient(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bobbin client", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, clientUsage) }
	addr := fs.String("rm", "127.0.0.1:8032", "ResourceManager client address (yarn.resourcemanager.address)")
	userName := fs.String("user", currentUser(), "user name sent in the connection context")
	timeout := fs.Duration("timeout", 10*time.Second, "time limit for the query")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	c := rmclient.New(*addr, *userName, rpc.ClientOptions{ConnectRetries: -1})
	defer c.Close()
	if err := clientQuery(ctx, c, fs.Args(), stdout); err != nil {
		fmt.Fprintf(stderr, "bobbin client: %v\n", err)
		return 1
	}
	return 0
}

func clientQuery(ctx context.Context, c *rmclient.Client, args []string, out io.Writer) error {
	switch args[0] {
	case "cluster":
		m, err := c.GetClusterMetrics(ctx)
		if err != nil {
			return err
		}
		nodes, err := c.GetClusterNodes(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "NodeManagers: %d\n", m.GetNumNodeManagers())
		for _, n := range nodes {
			fmt.Fprintf(out, "  %s:%d %s containers=%d\n", n.GetNodeId().GetHost(), n.GetNodeId().GetPort(), n.GetNodeState(), n.GetNumContainers())
		}
	case "new-application":
		r, err := c.GetNewApplication(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "New application: %s (maximum container %d MB, %d vcores)\n",
			records.AppIDFromProto(r.GetApplicationId()), r.GetMaximumCapability().GetMemory(), r.GetMaximumCapability().GetVirtualCores())
	case "queue":
		if len(args) != 2 {
			return fmt.Errorf("queue takes one queue name")
		}
		q, err := c.GetQueueInfo(ctx, &yarnpb.GetQueueInfoRequestProto{QueueName: proto.String(args[1])})
		if err != nil {
			return err
		}
		if q == nil {
			return fmt.Errorf("no queue named %s", args[1])
		}
		fmt.Fprintf(out, "Queue %s: state %s, capacity %.1f%%, maximum %.1f%%\n", q.GetQueueName(), q.GetState(), 100*q.GetCapacity(), 100*q.GetMaximumCapacity())
	case "app":
		if len(args) != 2 {
			return fmt.Errorf("app takes one application id")
		}
		id, err := records.ParseApplicationID(args[1])
		if err != nil {
			return err
		}
		r, err := c.GetApplicationReport(ctx, id.Proto())
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s %s %s user=%s queue=%s\n", args[1], r.GetYarnApplicationState(), r.GetFinalApplicationStatus(), r.GetUser(), r.GetQueue())
	case "kill":
		if len(args) != 2 {
			return fmt.Errorf("kill takes one application id")
		}
		id, err := records.ParseApplicationID(args[1])
		if err != nil {
			return err
		}
		var resp yarnpb.KillApplicationResponseProto
		if err := c.Call(ctx, "forceKillApplication", &yarnpb.KillApplicationRequestProto{ApplicationId: id.Proto()}, &resp); err != nil {
			return err
		}
		fmt.Fprintf(out, "Killed application %s\n", args[1])
	case "apps":
		apps, err := c.GetApplications(ctx, &yarnpb.GetApplicationsRequestProto{})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "Applications: %d\n", len(apps))
		for _, a := range apps {
			fmt.Fprintf(out, "  %s %s %s\n", records.AppIDFromProto(a.GetApplicationId()), a.GetName(), a.GetYarnApplicationState())
		}
	default:
		return fmt.Errorf("unknown query %q", args[0])
	}
	return nil
}

func currentUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return os.Getenv("USER")
}
