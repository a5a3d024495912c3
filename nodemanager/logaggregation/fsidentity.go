package logaggregation

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// asUser runs fn with this thread's file-system identity that of uid:gid, without
// supplementary groups: every path fn opens, creates, renames or removes is checked by
// the kernel as if that user did it, links included, and what it creates is that
// user's. It is how the root NodeManager writes into directories a user owns (the
// aggregated logs of a local file system) without the user being able to point it,
// by a link, at a file the user could not write, as Java's NodeManager does the same
// work as the user (doAs).
//
// Linux keeps credentials per thread: fn runs on this goroutine's thread, locked to it,
// and must not hand file-system work to other goroutines. setfsuid to a non-zero id also
// clears the file-system capabilities (CAP_DAC_OVERRIDE, CAP_FOWNER, …) until it is set
// back. A thread whose identity could not be restored is not given back to the runtime:
// it ends with the goroutine.
func asUser(uid, gid int, fn func() error) error {
	runtime.LockOSThread()
	restored := false
	defer func() {
		if restored {
			runtime.UnlockOSThread()
		}
	}()
	groups, err := unix.Getgroups()
	if err != nil {
		restored = true
		return fmt.Errorf("act as uid %d: getgroups: %w", uid, err)
	}
	// The raw system calls change this thread only (Go's Setgroups changes every thread).
	if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, 0, 0, 0); e != 0 {
		restored = true
		return fmt.Errorf("act as uid %d: setgroups: %w", uid, e)
	}
	unix.RawSyscall(unix.SYS_SETFSGID, uintptr(gid), 0, 0)
	unix.RawSyscall(unix.SYS_SETFSUID, uintptr(uid), 0, 0)
	// setfsuid answers the previous id whatever happened: an invalid id (-1) asks.
	fsuid, _, _ := unix.RawSyscall(unix.SYS_SETFSUID, ^uintptr(0), 0, 0)
	fsgid, _, _ := unix.RawSyscall(unix.SYS_SETFSGID, ^uintptr(0), 0, 0)
	if int(fsuid) == uid && int(fsgid) == gid {
		err = fn()
	} else {
		err = fmt.Errorf("act as uid %d gid %d: the thread's file-system ids are %d and %d", uid, gid, fsuid, fsgid)
	}
	restored = restoreFS(groups)
	return err
}

// restoreFS gives the thread back root's file-system identity and groups; false when it
// could not be checked back.
func restoreFS(groups []int) bool {
	unix.RawSyscall(unix.SYS_SETFSUID, 0, 0, 0)
	unix.RawSyscall(unix.SYS_SETFSGID, 0, 0, 0)
	fsuid, _, _ := unix.RawSyscall(unix.SYS_SETFSUID, ^uintptr(0), 0, 0)
	fsgid, _, _ := unix.RawSyscall(unix.SYS_SETFSGID, ^uintptr(0), 0, 0)
	if fsuid != 0 || fsgid != 0 {
		return false
	}
	gids := make([]uint32, len(groups))
	for i, g := range groups {
		gids[i] = uint32(g)
	}
	var e unix.Errno
	if len(gids) > 0 {
		_, _, e = unix.RawSyscall(unix.SYS_SETGROUPS, uintptr(len(gids)), uintptr(unsafe.Pointer(&gids[0])), 0)
	} else {
		_, _, e = unix.RawSyscall(unix.SYS_SETGROUPS, 0, 0, 0)
	}
	if e != 0 {
		return false
	}
	now, err := unix.Getgroups()
	return err == nil && len(now) == len(groups)
}
