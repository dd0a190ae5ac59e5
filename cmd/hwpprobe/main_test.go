// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/hwpprobe/hwpprobe/internal/hostvariant"
	"github.com/hwpprobe/hwpprobe/internal/testbin"
)

// hwpprobeBin is the real binary, built once by TestMain, that the
// end-to-end tests run.
var hwpprobeBin string

// binEnv hands the built binary to the child test processes that
// hostvariant.Each starts, which use it instead of building their own.
const binEnv = "HWPPROBE_TEST_BIN"

func TestMain(m *testing.M) {
	hostvariant.Setup()
	if out := os.Getenv(dumpEnv); out != "" {
		os.Exit(dumpState(out))
	}
	if os.Getenv(rssEnv) != "" {
		os.Exit(printMaxRSS(os.Args[1:]))
	}
	if hwpprobeBin = os.Getenv(binEnv); hwpprobeBin != "" {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "hwpprobe-bin")
	if err != nil {
		panic(err)
	}
	if hwpprobeBin, err = testbin.Build(dir, "."); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(binEnv, hwpprobeBin)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runBin runs the built binary and returns stdout, stderr and exit status.
func runBin(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(hwpprobeBin, args...)
	var o, e stringsBuilder
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	return o.String(), e.String(), code
}

type stringsBuilder struct{ b []byte }

func (s *stringsBuilder) Write(p []byte) (int, error) { s.b = append(s.b, p...); return len(p), nil }
func (s *stringsBuilder) String() string              { return string(s.b) }

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		code int
	}{
		{[]string{"--version"}, 0},
		{[]string{"no-such-command"}, 2},
		{[]string{"--no-such-flag"}, 2},
	}
	for _, tt := range tests {
		_, stderr, code := runBin(t, tt.args...)
		if code != tt.code {
			t.Errorf("hwpprobe %v: exit %d, want %d (stderr %q)", tt.args, code, tt.code, stderr)
		}
	}
}

// nobodyCmd returns a command that runs a copy of the built binary as user
// nobody (uid/gid 65534), in a directory nobody may write, for the tests
// of what an unprivileged user sees. The copy is needed because the
// binary's own directory is private to root.
func nobodyCmd(t *testing.T, args ...string) (cmd *exec.Cmd, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("must run as root (CI does)")
	}
	dir = t.TempDir()
	for d, mode := range map[string]os.FileMode{dir: 0o777, filepath.Dir(dir): 0o755} {
		if err := os.Chmod(d, mode); err != nil {
			t.Fatal(err)
		}
	}
	exe, err := os.ReadFile(hwpprobeBin)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "hwpprobe")
	if err := os.WriteFile(bin, exe, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	return cmd, dir
}
