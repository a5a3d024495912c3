package connkeep

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
)

// Messages between a server and its keeper travel on a SOCK_SEQPACKET unix socket in the
// abstract namespace, one message per packet: tab-separated text, and at most one file
// descriptor as SCM_RIGHTS.
//
//	server -> keeper: hello | L name addr +fd | U name | C slot +fd | D slot | bye
//	keeper -> server (answering hello): T size +memfd, then L name addr +fd and C slot +fd
//	for everything it holds, then E.

const maxMsg = 4096

func sockAddr(name string) *net.UnixAddr {
	return &net.UnixAddr{Name: "@" + name, Net: "unixpacket"}
}

func send(uc *net.UnixConn, fd int, fields ...string) error {
	var oob []byte
	if fd >= 0 {
		oob = syscall.UnixRights(fd)
	}
	_, _, err := uc.WriteMsgUnix([]byte(strings.Join(fields, "\t")), oob, nil)
	return err
}

// sendConn sends a message carrying a connection's (or listener's) descriptor.
func sendConn(uc *net.UnixConn, sc syscall.Conn, fields ...string) error {
	rc, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = send(uc, int(fd), fields...) }); err != nil {
		return err
	}
	return serr
}

// recv reads one message; fd is -1 when it carried none.
func recv(uc *net.UnixConn) (fields []string, fd int, err error) {
	buf := make([]byte, maxMsg)
	oob := make([]byte, syscall.CmsgSpace(4*4))
	n, oobn, flags, _, err := uc.ReadMsgUnix(buf, oob)
	if err != nil {
		return nil, -1, err
	}
	if n == 0 && oobn == 0 {
		return nil, -1, errClosed
	}
	fd = -1
	if oobn > 0 {
		msgs, err := syscall.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return nil, -1, fmt.Errorf("connkeep: control message: %w", err)
		}
		for _, m := range msgs {
			fds, err := syscall.ParseUnixRights(&m)
			if err != nil {
				continue
			}
			for _, f := range fds {
				if fd < 0 {
					fd = f
				} else {
					syscall.Close(f) // one descriptor per message; more is a peer bug
				}
			}
		}
	}
	if flags&syscall.MSG_CTRUNC != 0 && fd < 0 {
		return nil, -1, errors.New("connkeep: a descriptor was lost in transit (out of file descriptors?)")
	}
	return strings.Split(string(buf[:n]), "\t"), fd, nil
}

var errClosed = errors.New("connkeep: peer closed")

// sameUser refuses a peer running as another user: whoever holds the descriptors can
// read and answer every client of the server.
func sameUser(uc *net.UnixConn) error {
	rc, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var cred *syscall.Ucred
	var cerr error
	if err := rc.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("connkeep: peer credentials: %w", cerr)
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("connkeep: peer pid %d runs as uid %d, not %d", cred.Pid, cred.Uid, os.Getuid())
	}
	return nil
}
