package main

import (
	"fmt"
	"io"

	"github.com/bobbin-yarn/bobbin/conf"
	"github.com/bobbin-yarn/bobbin/resourcemanager"
	"github.com/bobbin-yarn/bobbin/resourcemanager/rmcore"
	"github.com/bobbin-yarn/bobbin/rpc/connkeep"
)

// runReleaseRMPorts frees the ports of a ResourceManager that was killed: its connection
// keeper (docs/recovery.md) holds them, and the connections it accepted, for
// bobbin.resourcemanager.connection-keeper.linger-ms after a SIGKILL, waiting for a
// Bobbin RM to take them back. Before a Java RM starts in its place (switching back,
// docs/migration.md), they are let go: the keeper closes everything and exits.
func runReleaseRMPorts(args []string, stdout, stderr io.Writer) int {
	f, log, sink, code := daemonPrologue("release-rm-ports", args, stderr)
	if f == nil {
		return code
	}
	defer sink.Close()
	c, _, err := conf.LoadDir(f.confDir, conf.ResourceManagerFiles()...)
	if err != nil {
		fmt.Fprintf(stderr, "bobbin release-rm-ports: %v\n", err)
		return 1
	}
	settings, err := rmcore.ReadSettings(c)
	if err != nil {
		fmt.Fprintf(stderr, "bobbin release-rm-ports: %v\n", err)
		return 1
	}
	kc, err := resourcemanager.KeeperConfigOf(c, settings.ClientAddr, false)
	if err != nil {
		fmt.Fprintf(stderr, "bobbin release-rm-ports: %v\n", err)
		return 1
	}
	if kc.Dir == "" {
		fmt.Fprintln(stdout, "no connection keeper is configured (bobbin.resourcemanager.connection-keeper.dir): nothing holds the ports")
		return 0
	}
	path, err := connkeep.SocketPath(kc.Dir, kc.Name)
	if err != nil {
		fmt.Fprintf(stderr, "bobbin release-rm-ports: %v\n", err)
		return 1
	}
	if err := releaseKeeper(path, log); err != nil {
		fmt.Fprintf(stderr, "bobbin release-rm-ports: %s: %v\n", path, err)
		return 1
	}
	fmt.Fprintf(stdout, "the ports of the ResourceManager at %s are free (keeper %s)\n", settings.ClientAddr, path)
	return 0
}
