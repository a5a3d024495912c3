package connkeep

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Messages between a server and its keeper travel on a SOCK_SEQPACKET unix socket, a file
// in a directory only the server's user may enter (PrivateDir), one message per packet:
// tab-separated text, and at most one file descriptor as SCM_RIGHTS.
//
//	server -> keeper: hello | L name addr +fd | U name | C slot +fd | D slot | bye
//	keeper -> server (answering hello): T size +memfd, then L name addr +fd and C slot +fd
//	for everything it holds, then E.

const maxMsg = 4096

func sockAddr(path string) *net.UnixAddr {
	return &net.UnixAddr{Name: path, Net: "unixpacket"}
}

// dial connects to the keeper's socket at path.
func dial(path string) (*net.UnixConn, error) {
	var uc *net.UnixConn
	err := viaShortPath(path, func(p string) (err error) {
		uc, err = net.DialUnix("unixpacket", nil, sockAddr(p))
		return err
	})
	return uc, err
}

// viaShortPath calls fn with a name for path that a unix socket address can hold: path
// itself when it fits in sun_path, else /proc/self/fd/<n>/<base> through a descriptor
// of its directory (held open while fn runs; a bound socket stays bound to the file).
func viaShortPath(path string, fn func(string) error) error {
	if len(path) <= maxSocketPath {
		return fn(path)
	}
	fd, err := unix.Open(filepath.Dir(path), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("connkeep: %s: %w", filepath.Dir(path), err)
	}
	defer unix.Close(fd)
	short := fmt.Sprintf("/proc/self/fd/%d/%s", fd, filepath.Base(path))
	if len(short) > maxSocketPath {
		return fmt.Errorf("connkeep: socket name %s is longer than %d bytes", filepath.Base(path), maxSocketPath)
	}
	return fn(short)
}

// ioTimeout bounds every exchange with a peer that is not the attached server's wait for
// its next message: a peer that stops reading or never speaks is dropped, not waited on.
const ioTimeout = 5 * time.Second

// maxSocketPath is the longest path a unix socket can be bound to (sun_path, 108 bytes
// with its terminating NUL).
const maxSocketPath = 107

// PrivateDir makes sure dir exists and is the current user's alone: a directory (not a
// link), owned by this user, with no access for group or others. The keeper's socket
// lives there, so no other user can bind its name first or connect to it.
func PrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("connkeep: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return fmt.Errorf("connkeep: %s: %w", dir, err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return fmt.Errorf("connkeep: %s is not a directory (a link?)", dir)
	case int(st.Uid) != os.Geteuid():
		return fmt.Errorf("connkeep: %s is owned by uid %d, not by this process's uid %d", dir, st.Uid, os.Geteuid())
	case st.Mode&0o077 != 0:
		return fmt.Errorf("connkeep: %s has mode %#o: group and others must have no access", dir, st.Mode&0o777)
	}
	return nil
}

// SocketPath is the keeper's socket for name in dir, which it checks is private. A path
// longer than a socket address holds is reached through the directory's descriptor.
func SocketPath(dir, name string) (string, error) {
	if err := PrivateDir(dir); err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
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

// ErrForeignPeer is a peer that runs as another user: never a keeper of this server's
// (which holds nothing of it), and never talked to.
var ErrForeignPeer = errors.New("connkeep: the peer runs as another user")

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
		return fmt.Errorf("%w: peer pid %d runs as uid %d, not %d", ErrForeignPeer, cred.Pid, cred.Uid, os.Getuid())
	}
	return nil
}
