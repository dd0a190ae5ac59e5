// SPDX-License-Identifier: Apache-2.0

package cpuidshim

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/emu/vfs"
	"github.com/hwpprobe/hwpprobe/internal/hostvariant"
)

// noFaultChild makes the test binary a launcher: it refuses
// arch_prctl(ARCH_SET_CPUID) with ENODEV through a seccomp filter, as the
// kernel does on AMD, and executes its arguments under it: NAME=VALUE
// entries added to the environment (the library's, which the launcher
// itself must not load), "--", the program and its arguments.
const noFaultChild = "CPUIDSHIM_NO_FAULT_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(noFaultChild) != "" {
		fmt.Fprintln(os.Stderr, execWithoutFaulting(os.Args[1:]))
		os.Exit(126)
	}
	os.Exit(m.Run())
}

// execWithoutFaulting installs the filter on every thread and executes
// args; it returns only on failure.
func execWithoutFaulting(args []string) error {
	if err := hostvariant.RefuseCPUIDFaulting(); err != nil {
		return err
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, noFaultChild+"=") {
			env = append(env, kv)
		}
	}
	for len(args) > 0 && args[0] != "--" {
		env, args = append(env, args[0]), args[1:]
	}
	if len(args) < 2 {
		return fmt.Errorf("launcher: want NAME=VALUE... -- PROG [ARG...]")
	}
	return syscall.Exec(args[1], args[1:], env)
}

// TestFallbackWithoutFaulting reproduces an AMD host on any host: where
// ARCH_SET_CPUID fails with ENODEV, the library left to choose answers
// the emulated leaves by patching, a forced fault path stops with exit
// 127 naming the refusal, and the forced patch path works.
func TestFallbackWithoutFaulting(t *testing.T) {
	so, prog := build(t)
	tree := vfs.NewDir()
	tree.Put("cpuid", cpuidFile(emulated))
	dev := filepath.Join(serve(t, tree), "cpuid")
	want := emulatedWant(t, prog)
	for _, tc := range []struct {
		mode     Mode
		exit     string
		want     string // output, or what the error line holds
		fullDiff bool
	}{
		{Auto, "exit 0", want, true},
		{Patch, "exit 0", want, true},
		{Fault, "exit 127", "no CPUID faulting", false},
	} {
		t.Run("mode="+string(tc.mode), func(t *testing.T) {
			args := append(shimEnv(t, so, dev, tc.mode, prog), "--", prog, "1", "6", "0", "6.0xffffffff")
			cmd := exec.Command(os.Args[0], args...)
			cmd.Env = append(os.Environ(), noFaultChild+"=1")
			out, err := cmd.CombinedOutput()
			if got := exitOf(err); got != tc.exit {
				t.Fatalf("%s, want %s: %s", got, tc.exit, out)
			}
			if !tc.fullDiff {
				if !strings.Contains(string(out), tc.want) {
					t.Errorf("output %q lacks %q", out, tc.want)
				}
				return
			}
			if d := cmp.Diff(tc.want, string(out)); d != "" {
				t.Errorf("CPUID without faulting (-want +got):\n%s", d)
			}
		})
	}
}
