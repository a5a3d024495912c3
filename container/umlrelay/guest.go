package umlrelay

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Guest is the agent's side, run in the guest by its init (bobbin uml-guest-relay).
type Guest struct {
	Relay string // the host's relay, host:port as the guest reaches it (10.0.2.2:<port>)
	Token string
	// Listening lists the guest's listening TCP ports (ListeningPorts of /proc/net/tcp
	// and tcp6 in a guest).
	Listening func() (map[int]bool, error)
	// Dial connects to the guest's service on a port (its own address: with the host's
	// loopback routed through slirp, 127.0.0.1 in a guest is the host's).
	Dial func(ctx context.Context, port int) (net.Conn, error)
	// Poll is how often the listening ports are read.
	Poll time.Duration
}

// Run connects to the relay (retrying while the guest's network comes up) and serves it
// until ctx ends or the relay goes away.
func (g *Guest) Run(ctx context.Context) error {
	var ctl net.Conn
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, "tcp", g.Relay)
		if err == nil {
			ctl = c
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("umlrelay: connecting to %s: %w", g.Relay, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	defer ctl.Close()
	if _, err := fmt.Fprintf(ctl, "%s\n", message{verb: "CTL", token: g.Token}); err != nil {
		return fmt.Errorf("umlrelay: greeting the relay: %w", err)
	}
	// The relay's OPENs.
	readErr := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(ctl)
		sc.Buffer(make([]byte, maxLine), maxLine)
		for sc.Scan() {
			m, err := parseMessage(sc.Text())
			if err != nil || m.verb != "OPEN" {
				readErr <- fmt.Errorf("umlrelay: the relay sent %q", sc.Text())
				cancel()
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				g.open(ctx, m)
			}()
		}
		readErr <- fmt.Errorf("umlrelay: the relay closed: %v", sc.Err())
		cancel()
	}()
	// The guest's listening ports, reported as they come and go.
	known := map[int]bool{}
	poll := g.Poll
	if poll <= 0 {
		poll = 250 * time.Millisecond
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		now, err := g.Listening()
		if err == nil {
			for p := range now {
				if !known[p] {
					if _, err := fmt.Fprintf(ctl, "%s\n", message{verb: "LISTEN", port: p}); err != nil {
						return fmt.Errorf("umlrelay: reporting port %d: %w", p, err)
					}
				}
			}
			for p := range known {
				if !now[p] {
					if _, err := fmt.Fprintf(ctl, "%s\n", message{verb: "CLOSE", port: p}); err != nil {
						return fmt.Errorf("umlrelay: reporting port %d closed: %w", p, err)
					}
				}
			}
			known = now
		}
		select {
		case <-ctx.Done():
			select {
			case err := <-readErr:
				return err
			default:
				return ctx.Err()
			}
		case <-t.C:
		}
	}
}

// open connects to the guest's service and to the relay, and joins them. When the
// service cannot be reached, the data connection is closed at once, and so the host's.
func (g *Guest) open(ctx context.Context, m message) {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	svc, svcErr := g.Dial(dctx, m.port)
	var d net.Dialer
	up, err := d.DialContext(dctx, "tcp", g.Relay)
	if err != nil {
		if svc != nil {
			svc.Close()
		}
		return // the relay gives up on its side
	}
	defer up.Close()
	if _, err := fmt.Fprintf(up, "%s\n", message{verb: "DATA", token: g.Token, id: m.id}); err != nil || svcErr != nil {
		if svc != nil {
			svc.Close()
		}
		return
	}
	defer svc.Close()
	stop := context.AfterFunc(ctx, func() { svc.Close(); up.Close() })
	defer stop()
	join(svc, up)
}

// ListeningPorts reads the TCP ports in the LISTEN state from /proc/net/tcp and tcp6
// (files absent, as tcp6 without IPv6, are skipped).
func ListeningPorts() (map[int]bool, error) {
	ports := map[int]bool{}
	read := 0
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		read++
		for p := range parseProcNetTCP(string(b)) {
			ports[p] = true
		}
	}
	if read == 0 {
		return nil, fmt.Errorf("umlrelay: no /proc/net/tcp")
	}
	return ports, nil
}

// parseProcNetTCP reads the listening ports of /proc/net/tcp's format: after the header,
// "sl local_address rem_address st ...", the local address "ADDR:PORT" in hex and the
// state 0A for LISTEN.
func parseProcNetTCP(s string) map[int]bool {
	ports := map[int]bool{}
	for i, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if i == 0 || len(f) < 4 || f[3] != "0A" {
			continue
		}
		_, hexPort, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		if p, err := strconv.ParseUint(hexPort, 16, 16); err == nil && p > 0 {
			ports[int(p)] = true
		}
	}
	return ports
}
