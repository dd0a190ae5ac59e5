// SPDX-License-Identifier: Apache-2.0

// Package buildinfo says what a hwpprobe or hwpemu binary is: its version,
// the module it was built from, the VCS revision and time, and the Go that
// built it, from what the linker wrote (runtime/debug.ReadBuildInfo) and
// the version the Makefile sets with -ldflags "-X main.version=...", which
// wins when set. A binary from `go install ...@VERSION` has the module
// version; one built in a git clone (not a worktree: the go command stamps
// only a .git directory) with VCS stamping on has the revision and time.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Unset is the version a binary built without -ldflags has in main.version.
const Unset = "dev"

// Info is what a binary knows about its build. Empty fields are unknown.
type Info struct {
	Version   string // the -ldflags version, else the module version, else Unset
	Module    string // the main module's path
	ModuleVer string // the main module's version ("(devel)" for a local build)
	Revision  string // vcs.revision
	Time      string // vcs.time (RFC 3339)
	Modified  bool   // vcs.modified: the work tree had uncommitted changes
	GoVersion string // the Go toolchain that built the binary
	Platform  string // GOOS/GOARCH
}

// Read returns this binary's Info; ldVersion is main.version.
func Read(ldVersion string) Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return FromBuildInfo(bi, ldVersion)
}

// FromBuildInfo returns the Info of the build bi describes (nil: a binary
// without build information) with ldVersion, main.version, preferred as
// the version when it is not Unset or empty.
func FromBuildInfo(bi *debug.BuildInfo, ldVersion string) Info {
	in := Info{Version: ldVersion, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		in.Module, in.ModuleVer = bi.Main.Path, bi.Main.Version
		if bi.GoVersion != "" {
			in.GoVersion = bi.GoVersion
		}
		var goos, goarch string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				in.Revision = s.Value
			case "vcs.time":
				in.Time = s.Value
			case "vcs.modified":
				in.Modified = s.Value == "true"
			case "GOOS":
				goos = s.Value
			case "GOARCH":
				goarch = s.Value
			}
		}
		if goos != "" && goarch != "" {
			in.Platform = goos + "/" + goarch
		}
	}
	if in.Version == "" || in.Version == Unset {
		in.Version = Unset
		if in.ModuleVer != "" && in.ModuleVer != "(devel)" {
			in.Version = in.ModuleVer
		}
	}
	return in
}

// String is the report `NAME version` and `NAME --version` print: the
// version on the first line, then one line per known fact.
func (in Info) String(name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", name, in.Version)
	line := func(k, v string) { fmt.Fprintf(&b, "  %-9s %s\n", k, v) }
	if in.Module != "" {
		mv := in.ModuleVer
		if mv == "" {
			mv = "(devel)"
		}
		line("module", in.Module+" "+mv)
	}
	if in.Revision != "" {
		r := in.Revision
		if in.Modified {
			r += " (modified)"
		}
		line("revision", r)
	} else {
		line("revision", "unknown (not stamped: built outside a git clone, in a git worktree, or with -buildvcs=false)")
	}
	if in.Time != "" {
		line("time", in.Time)
	}
	line("go", in.GoVersion+" "+in.Platform)
	return b.String()
}
