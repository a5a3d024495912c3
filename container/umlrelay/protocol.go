// Package umlrelay makes the services a User-Mode Linux guest listens on reachable from
// outside it, at the same port on the host, as a process container's would be.
//
// A guest reaches the network through slirp, which lets it connect out (to the host as
// 10.0.2.2) but lets nothing connect in, and each guest has a slirp of its own. A
// MapReduce AM in a guest advertises its umbilical and client ports as the node's
// (localhost or the host's name), and its tasks, in guests of their own, and its job
// client, on the host, connect there: so each port a guest listens on is forwarded from
// the host. The guest's agent (RunGuest, started by the guest's init from the
// NodeManager's own binary) connects out to the host's relay (Relay, one per guest, in
// the NodeManager) and reports the guest's listening ports; the relay listens on each at
// the host, and for each connection it accepts asks the agent to connect to the guest's
// service and to open a data connection to the relay, and joins the two.
//
// The protocol, over TCP from the guest to the relay's loopback port, lines first:
//
//	control connection:  guest "CTL <token>", then guest "LISTEN <port>" / "CLOSE <port>",
//	                     relay "OPEN <id> <port>"
//	data connection:     guest "DATA <token> <id>", then the connection's bytes both ways
//
// The token, random per guest and handed to it in its configuration file, keeps other
// processes on the host from posing as the guest.
package umlrelay

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// A message is one protocol line.
type message struct {
	verb  string // CTL, DATA, LISTEN, CLOSE, OPEN
	token string // CTL, DATA
	id    uint64 // DATA, OPEN
	port  int    // LISTEN, CLOSE, OPEN
}

func (m message) String() string {
	switch m.verb {
	case "CTL":
		return "CTL " + m.token
	case "DATA":
		return fmt.Sprintf("DATA %s %d", m.token, m.id)
	case "OPEN":
		return fmt.Sprintf("OPEN %d %d", m.id, m.port)
	default:
		return fmt.Sprintf("%s %d", m.verb, m.port)
	}
}

// maxLine bounds a protocol line: a peer that sends more is not the agent.
const maxLine = 128

// parseMessage reads one protocol line (without its newline).
func parseMessage(line string) (message, error) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return message{}, errors.New("umlrelay: empty line")
	}
	m := message{verb: f[0]}
	want := map[string]int{"CTL": 2, "DATA": 3, "LISTEN": 2, "CLOSE": 2, "OPEN": 3}[m.verb]
	if want == 0 || len(f) != want {
		return message{}, fmt.Errorf("umlrelay: bad line %q", line)
	}
	var err error
	port := func(s string) int {
		p, perr := strconv.Atoi(s)
		if perr != nil || p < 1 || p > 65535 {
			err = fmt.Errorf("umlrelay: bad port in %q", line)
		}
		return p
	}
	id := func(s string) uint64 {
		n, perr := strconv.ParseUint(s, 10, 64)
		if perr != nil {
			err = fmt.Errorf("umlrelay: bad id in %q", line)
		}
		return n
	}
	switch m.verb {
	case "CTL":
		m.token = f[1]
	case "DATA":
		m.token, m.id = f[1], id(f[2])
	case "LISTEN", "CLOSE":
		m.port = port(f[1])
	case "OPEN":
		m.id, m.port = id(f[1]), port(f[2])
	}
	if err != nil {
		return message{}, err
	}
	return m, nil
}

// readLine reads one line of at most maxLine bytes, byte by byte: on a data connection
// the bytes after the line are the relayed connection's, and must not be buffered away.
func readLine(r interface{ Read([]byte) (int, error) }) (string, error) {
	var b []byte
	one := make([]byte, 1)
	for len(b) <= maxLine {
		n, err := r.Read(one)
		if n == 1 {
			if one[0] == '\n' {
				return string(b), nil
			}
			b = append(b, one[0])
		}
		if err != nil {
			return "", err
		}
	}
	return "", errors.New("umlrelay: line too long")
}
