package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"time"
)

// Version, Commit and BuildDate are set at build time with -ldflags "-X main.Version=..."
// (make build sets the commit's description, its hash and the date, RFC 3339). Without
// Commit, the commit the Go toolchain recorded (when it builds with -buildvcs) is used.
var (
	Version   = "dev"
	Commit    = ""
	BuildDate = ""
)

// printVersion writes what `bobbin version` says: the version, the commit the binary was
// built from (the Go toolchain records it when building in a git checkout) and its time,
// whether the tree had changes, when it was built and with which Go.
func printVersion(w io.Writer) {
	fmt.Fprintf(w, "Bobbin %s (speaks Hadoop YARN 2.7-3.x protocols)\n", Version)
	commit, when, modified := Commit, "", false
	if bi, ok := debug.ReadBuildInfo(); ok && commit == "" {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	switch {
	case commit == "":
		fmt.Fprintln(w, "commit: unknown (not built from a git checkout)")
	case when == "":
		fmt.Fprintf(w, "commit: %s\n", commit)
	case modified:
		fmt.Fprintf(w, "commit: %s, with uncommitted changes (committed %s)\n", commit, when)
	default:
		fmt.Fprintf(w, "commit: %s (committed %s)\n", commit, when)
	}
	built := "unknown (built without make)"
	if t, err := time.Parse(time.RFC3339, BuildDate); err == nil {
		built = t.UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(w, "built: %s with %s for %s/%s\n", built, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
