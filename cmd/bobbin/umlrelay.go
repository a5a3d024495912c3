package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/bobbin-yarn/bobbin/container/umlrelay"
)

// runUMLGuestRelay is `bobbin uml-guest-relay`, started by a UML guest's init (not for
// people): it reports the ports the guest listens on to the NodeManager's relay for the
// guest, which forwards them from the host, and connects the relay's connections to the
// guest's services. The relay's token comes in BOBBIN_RELAY_TOKEN.
func runUMLGuestRelay(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("uml-guest-relay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	relay := fs.String("relay", "", "the host's relay, host:port as the guest reaches it")
	guestIP := fs.String("guest-ip", "", "the guest's own address, where its services are dialled")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	token := os.Getenv("BOBBIN_RELAY_TOKEN")
	if *relay == "" || *guestIP == "" || token == "" {
		fmt.Fprintln(stderr, "bobbin uml-guest-relay: --relay, --guest-ip and BOBBIN_RELAY_TOKEN are required")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	g := &umlrelay.Guest{Relay: *relay, Token: token, Listening: umlrelay.ListeningPorts,
		Dial: func(ctx context.Context, port int) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", net.JoinHostPort(*guestIP, strconv.Itoa(port)))
		}}
	if err := g.Run(ctx); err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "bobbin uml-guest-relay: %v\n", err)
		return 1
	}
	return 0
}
