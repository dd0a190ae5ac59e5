// SPDX-License-Identifier: Apache-2.0

package buildinfo

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFromBuildInfo(t *testing.T) {
	stamped := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/hwpprobe/hwpprobe", Version: "v0.4.0"},
		Settings: []debug.BuildSetting{
			{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "arm64"},
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "d7b156a97ce58f16aa01ce99269f79d19c932b33"},
			{Key: "vcs.time", Value: "2026-11-30T10:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	local := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/hwpprobe/hwpprobe", Version: "(devel)"}}
	host := runtime.GOOS + "/" + runtime.GOARCH
	tests := []struct {
		name      string
		bi        *debug.BuildInfo
		ldVersion string
		want      Info
	}{
		{"go install: module version", stamped, Unset, Info{Version: "v0.4.0", Module: "github.com/hwpprobe/hwpprobe", ModuleVer: "v0.4.0",
			Revision: "d7b156a97ce58f16aa01ce99269f79d19c932b33", Time: "2026-11-30T10:00:00Z", Modified: true, GoVersion: "go1.26.8", Platform: "linux/arm64"}},
		{"Makefile's version wins", stamped, "v0.4.0-3-gabcdef0", Info{Version: "v0.4.0-3-gabcdef0", Module: "github.com/hwpprobe/hwpprobe", ModuleVer: "v0.4.0",
			Revision: "d7b156a97ce58f16aa01ce99269f79d19c932b33", Time: "2026-11-30T10:00:00Z", Modified: true, GoVersion: "go1.26.8", Platform: "linux/arm64"}},
		{"local build without stamping", local, Unset, Info{Version: Unset, Module: "github.com/hwpprobe/hwpprobe", ModuleVer: "(devel)", GoVersion: "go1.26.8", Platform: host}},
		{"empty ldflags version", local, "", Info{Version: Unset, Module: "github.com/hwpprobe/hwpprobe", ModuleVer: "(devel)", GoVersion: "go1.26.8", Platform: host}},
		{"no build information", nil, "v1", Info{Version: "v1", GoVersion: runtime.Version(), Platform: host}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, FromBuildInfo(tt.bi, tt.ldVersion)); diff != "" {
				t.Errorf("FromBuildInfo (-want +got):\n%s", diff)
			}
		})
	}
}

func TestString(t *testing.T) {
	in := Info{Version: "v0.4.0", Module: "github.com/hwpprobe/hwpprobe", ModuleVer: "v0.4.0",
		Revision: "d7b156a", Time: "2026-11-30T10:00:00Z", Modified: true, GoVersion: "go1.26.8", Platform: "linux/amd64"}
	want := `hwpprobe v0.4.0
  module    github.com/hwpprobe/hwpprobe v0.4.0
  revision  d7b156a (modified)
  time      2026-11-30T10:00:00Z
  go        go1.26.8 linux/amd64
`
	if diff := cmp.Diff(want, in.String("hwpprobe")); diff != "" {
		t.Errorf("String (-want +got):\n%s", diff)
	}
}

// showMain prints Read's report in a module nested under this one's path
// (so that it may import this internal package).
const showMain = `package main

import (
	"fmt"

	"github.com/hwpprobe/hwpprobe/internal/buildinfo"
)

var version = buildinfo.Unset

func main() { fmt.Print(buildinfo.Read(version).String("show")) }
`

// TestAgainstGoVersion builds a program in a fresh git repository with
// VCS stamping on and compares what Read says with what `go version -m`
// reads from the same binary.
func TestAgainstGoVersion(t *testing.T) {
	for _, tool := range []string{"go", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not on PATH (CI installs both): %v", tool, err)
		}
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	const mod = "github.com/hwpprobe/hwpprobe/internal/buildinfo/show"
	gomod := "module " + mod + "\n\ngo 1.26.0\n\nrequire github.com/hwpprobe/hwpprobe v0.0.0\n\nreplace github.com/hwpprobe/hwpprobe => " + repo + "\n"
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"go.mod": gomod, "go.sum": string(sum), "main.go": showMain} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GIT_AUTHOR_DATE=2026-11-30T10:00:00Z", "GIT_COMMITTER_DATE=2026-11-30T10:00:00Z")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("git", "init", "-q")
	run("git", "add", ".")
	run("git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "show")
	bin := filepath.Join(dir, "show")
	run("go", "build", "-buildvcs=true", "-o", bin, ".")

	// The peer: go version -m prints "\tmod\tPATH\tVERSION" and
	// "\tbuild\tKEY=VALUE" lines.
	peer := map[string]string{}
	goVersion := ""
	for i, line := range strings.Split(run("go", "version", "-m", bin), "\n") {
		f := strings.Split(strings.TrimSpace(line), "\t")
		switch {
		case i == 0:
			goVersion = strings.TrimSpace(line[strings.LastIndex(line, " ")+1:])
		case len(f) >= 3 && f[0] == "mod":
			peer["module"], peer["version"] = f[1]+" "+f[2], f[2]
		case len(f) == 2 && f[0] == "build":
			if k, v, ok := strings.Cut(f[1], "="); ok {
				peer[k] = v
			}
		}
	}
	rev := peer["vcs.revision"]
	if peer["vcs.modified"] == "true" {
		rev += " (modified)"
	}
	// Without -ldflags the version is the module's (a pseudo-version
	// the go command derives from the commit).
	want := "show " + peer["version"] + "\n" +
		"  module    " + peer["module"] + "\n" +
		"  revision  " + rev + "\n" +
		"  time      " + peer["vcs.time"] + "\n" +
		"  go        " + goVersion + " " + peer["GOOS"] + "/" + peer["GOARCH"] + "\n"
	if peer["vcs.revision"] == "" || peer["vcs.time"] != "2026-11-30T10:00:00Z" {
		t.Fatalf("go version -m shows no VCS stamp: %v", peer)
	}
	if diff := cmp.Diff(want, run(bin)); diff != "" {
		t.Errorf("the binary's report against go version -m (-want +got):\n%s", diff)
	}
}
