package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/bobbin-yarn/bobbin/container"
)

// runUMLProbe is `bobbin uml-probe`: it boots one tiny guest with a UML kernel, as the
// NodeManager does before it offers UML containers, and says whether guests run on this
// host (exit 0) or why not (exit 1). .ci/run and `make uml-kernel` use it to tell whether
// Debian's packaged kernel will do.
func runUMLProbe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("uml-probe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kernel := fs.String("kernel", "linux.uml", "the UML kernel binary")
	tmp := fs.String("tmp-dir", "/dev/shm", "where the guest's RAM file is created (it must allow exec)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if st, err := os.Stat(*tmp); err != nil || !st.IsDir() {
		*tmp = os.TempDir()
	}
	dir, err := os.MkdirTemp("", "bobbin-uml-probe-")
	if err != nil {
		fmt.Fprintf(stderr, "bobbin uml-probe: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	e := &container.UMLExecutor{Kernel: *kernel, StateDir: dir, TmpDir: *tmp, BootTimeout: 30 * time.Second}
	p := e.ProbeUML(context.Background())
	if p.Err != nil {
		fmt.Fprintf(stderr, "bobbin uml-probe: %v\n", p.Err)
		return 1
	}
	fmt.Fprintf(stdout, "%s (%s) runs guests on this host (%s): booted, ran bash through a signal and powered off in %d ms\n",
		p.Kernel, p.KernelVersion, p.Host, p.Boot.Milliseconds())
	return 0
}
