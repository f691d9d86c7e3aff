package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/tensorcast-go/tensorcast/kernels"
)

// runVersion prints the module's version (or the source revision of a
// build from a checkout), the Go toolchain and the kernels' tier.
func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	pos, err := parseArgs(fs, "tcast version\n\n"+
		"Prints the version of tcast (the module's, or the source revision it was built from), the Go\n"+
		"version that built it, and the tier of the kernels it runs on this machine.", args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("version takes no arguments, got %s", count(len(pos), "argument"))
	}
	fmt.Fprintf(stdout, "tcast %s, %s %s/%s, kernels %s\n", buildVersion(), runtime.Version(),
		runtime.GOOS, runtime.GOARCH, kernels.Tier())
	return nil
}

// buildVersion is the module version of the build, or for a build from a
// checkout its revision and time ("devel 0a9cd6d 2026-12-01T21:39:00Z",
// "+dirty" when the tree had changes), "devel" when neither is known.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, at, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value[:min(len(s.Value), 12)]
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev == "" {
		return "devel"
	}
	return "devel " + rev + dirty + " " + at
}
