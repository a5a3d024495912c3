package umltest

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// faultEnv, in a test binary's environment, makes it the FP-fault kernel's first step
// (FPFaultKernel): it installs the seccomp filter and executes the kernel it names, with
// the binary's arguments, before any test runs.
const faultEnv = "BOBBIN_UMLTEST_FP_FAULT_KERNEL"

func init() {
	kernel := os.Getenv(faultEnv)
	if kernel == "" {
		return
	}
	os.Unsetenv(faultEnv)
	if err := execWithFPFault(kernel, os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "umltest: %v\n", err)
		os.Exit(127)
	}
}

// The filter: on x86-64, ptrace(PTRACE_SETREGSET, pid, NT_X86_XSTATE, …) fails with
// EFAULT, as the host kernel's xstateregs_set answers a buffer that is not the host's
// full XSAVE size; every other call is allowed.
const (
	ptraceSetRegset = 0x4205
	ntX86XState     = 0x202
	auditArchX86_64 = 0xc000003e
	retAllow        = 0x7fff0000
	retErrno        = 0x00050000
)

func fpFaultFilter() []unix.SockFilter {
	ld := func(off uint32) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off}
	}
	// jeq jumps to the next instruction on a match and to the allow at the end otherwise
	// (jf counts the instructions between).
	jeq := func(v uint32, toAllow uint8) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: v, Jt: 0, Jf: toAllow}
	}
	ret := func(v uint32) unix.SockFilter { return unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: v} }
	return []unix.SockFilter{
		ld(4), jeq(auditArchX86_64, 7), // seccomp_data.arch
		ld(0), jeq(unix.SYS_PTRACE, 5), // .nr
		ld(16), jeq(ptraceSetRegset, 3), // .args[0], low half
		ld(32), jeq(ntX86XState, 1), // .args[2], low half
		ret(retErrno | uint32(unix.EFAULT)),
		ret(retAllow),
	}
}

func execWithFPFault(kernel string, args []string) error {
	// The filter binds the thread that installs it (and, with TSYNC, the process's other
	// threads); the exec must come from the same thread.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	f := fpFaultFilter()
	prog := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog))); errno != 0 {
		return fmt.Errorf("seccomp: %w", errno)
	}
	return syscall.Exec(kernel, append([]string{kernel}, args...), os.Environ())
}
