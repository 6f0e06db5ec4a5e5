// Package buildinfo is what every livetable binary prints for --version:
// the version, the commit and the build date, set at link time by the
// Makefile (go build -ldflags "-X ...buildinfo.version=..."; see
// LinkFlags there), or else read from the Go toolchain's VCS stamp.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set by the linker (-X); empty in a plain go build or go run.
var (
	version string
	commit  string
	date    string
)

// Info is one binary's build.
type Info struct {
	// Version is the release (git describe), "dev" when unknown.
	Version string
	// Commit is the source revision, "unknown" when not stamped.
	Commit string
	// Date is when the binary was built (or the commit's time, from the
	// VCS stamp), "unknown" when not stamped.
	Date string
	// Go is the toolchain that built it.
	Go string
}

// Get returns the build information of the running binary.
func Get() Info { return resolve(version, commit, date, debug.ReadBuildInfo) }

func resolve(v, c, d string, read func() (*debug.BuildInfo, bool)) Info {
	in := Info{Version: v, Commit: c, Date: d, Go: runtime.Version()}
	if bi, ok := read(); ok {
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && in.Commit == "":
				in.Commit = s.Value
			case s.Key == "vcs.time" && in.Date == "":
				in.Date = s.Value
			}
		}
		if in.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			in.Version = bi.Main.Version
		}
	}
	for _, f := range []*string{&in.Version, &in.Commit, &in.Date} {
		if *f == "" {
			*f = "unknown"
		}
	}
	if in.Version == "unknown" {
		in.Version = "dev"
	}
	return in
}

// String is the --version line of program.
func String(program string) string {
	in := Get()
	return fmt.Sprintf("%s %s (commit %s, built %s, %s)", program, in.Version, in.Commit, in.Date, in.Go)
}
