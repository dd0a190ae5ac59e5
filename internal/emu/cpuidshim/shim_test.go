// SPDX-License-Identifier: Apache-2.0

package cpuidshim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/hwpprobe/hwpprobe/internal/emu/fusefs"
	"github.com/hwpprobe/hwpprobe/internal/emu/vfs"
)

// build compiles the library and the CPUID printer testdata/cpuid.c.
func build(t *testing.T) (so, prog string) {
	t.Helper()
	dir := t.TempDir()
	so, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	prog = filepath.Join(dir, "cpuid")
	if out, err := exec.Command(compiler(), "-O2", "-Wall", "-Werror", "-o", prog, "testdata/cpuid.c").CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", compiler(), err, out)
	}
	return so, prog
}

// shimEnv is Env for prog, failing the test on error.
func shimEnv(t *testing.T, so, dev string, mode Mode, prog string) []string {
	t.Helper()
	env, err := Env(so, dev, mode, prog)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// eachMode runs f as a subtest for each path this host can take (both
// where the kernel grants CPUID faulting, patching only where not).
func eachMode(t *testing.T, f func(t *testing.T, mode Mode)) {
	for _, mode := range Modes() {
		t.Run(string(mode), func(t *testing.T) {
			t.Logf("CPUID path: %s", mode)
			f(t, mode)
		})
	}
}

func runProg(t *testing.T, env []string, argv ...string) string {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v %v: %v: %s", env, argv, err, out)
	}
	return string(out)
}

// TestRealCPUIDDevice answers CPUID from the kernel's own /dev/cpu/0/cpuid
// while pinned to CPU 0: the result must equal the instruction's, which
// shows the library uses the driver's offset convention
// (arch/x86/kernel/cpuid.c: offset = ECX << 32 | EAX).
func TestRealCPUIDDevice(t *testing.T) {
	so, prog := build(t)
	leaves := []string{"0", "1", "6", "7.0", "7.1", "0xb.0", "0xb.1", "0x80000000"}
	argv := append([]string{"taskset", "-c", "0", prog}, leaves...)
	want := runProg(t, nil, argv...)
	eachMode(t, func(t *testing.T, mode Mode) {
		got := runProg(t, shimEnv(t, so, "/dev/cpu/0/cpuid", mode, prog), argv...)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("CPUID through the shim and the real device differs from the instruction (-want +got):\n%s", d)
		}
	})
}

// Meteor Lake's leaves 1 and 6 as the emulated files below serve them.
var emulated = map[uint64][4]uint32{
	// Family 6 model 0xAA stepping 4: signature 0xa06a4.
	1: {0x000a06a4, 0x00100800, 0x7ffafbbf, 0xbfebfbff},
	// SDM CPUID leaf 6: EAX bits 7-11 HWP, HWP notification, activity
	// window, EPP, package request (0xf87 with DTS, turbo, ARAT); ECX
	// bit 0 APERF/MPERF, bit 3 EPB. The same value the repository's
	// shared cpuid-shim README uses for HWP machines.
	6: {0xf87, 0, 0x9, 0},
}

// cpuidFile is a cpuid device answering leaves, EIO for any other.
func cpuidFile(leaves map[uint64][4]uint32) *vfs.Device {
	return &vfs.Device{Mode: 0o444, ReadAt: func(p []byte, off int64) (int, error) {
		r, ok := leaves[uint64(off)]
		if !ok || len(p) != 16 {
			return 0, syscall.EIO
		}
		for i, v := range r {
			binary.LittleEndian.PutUint32(p[4*i:], v)
		}
		return 16, nil
	}}
}

// serve mounts tree through FUSE (as hwpemu does) and returns the mount.
func serve(t *testing.T, tree *vfs.Dir) string {
	t.Helper()
	dir := t.TempDir()
	srv, err := fusefs.Mount(dir, tree, fusefs.Options{Name: "cpuidshim-test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Unmount() })
	return dir
}

// emulatedWant is the test program's output for "1 6 0 6.0xffffffff" with
// the emulated leaves: 1 and 6 from the file, 0 from the real CPU. Leaf 6
// with ECX 0xffffffff, as a caller that does not set ECX for a leaf
// without subleaves may leave it, is answered as subleaf 0, not by the
// real CPU (the offset would be negative).
func emulatedWant(t *testing.T, prog string) string {
	return "0x1.0: 0xa06a4 0x100800 0x7ffafbbf 0xbfebfbff\n" +
		"0x6.0: 0xf87 0 0x9 0\n" + runProg(t, nil, prog, "0") + "0x6.4294967295: 0xf87 0 0x9 0\n"
}

// TestEmulatedLeaves serves a cpuid file that knows leaves 1 and 6 only:
// those come from the file, the rest from the real CPU.
func TestEmulatedLeaves(t *testing.T) {
	so, prog := build(t)
	tree := vfs.NewDir()
	tree.Put("cpuid", cpuidFile(emulated))
	dir := serve(t, tree)
	want := emulatedWant(t, prog)
	eachMode(t, func(t *testing.T, mode Mode) {
		got := runProg(t, shimEnv(t, so, filepath.Join(dir, "cpuid"), mode, prog), prog, "1", "6", "0", "6.0xffffffff")
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("CPUID with the emulated file (-want +got):\n%s", d)
		}
	})
}

// TestPerCPUDevice: with "%d" in the device path each CPUID is answered
// from the file of the CPU the program runs on.
func TestPerCPUDevice(t *testing.T) {
	so, prog := build(t)
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	tree := vfs.NewDir()
	var cpus []int
	for cpu := 0; cpu < 1024; cpu++ {
		if set.IsSet(cpu) {
			cpus = append(cpus, cpu)
			tree.Put(fmt.Sprintf("%d/cpuid", cpu), cpuidFile(map[uint64][4]uint32{1: {0xa06a4, uint32(cpu)<<24 | 0x800, 0, 0}}))
		}
	}
	dir := serve(t, tree)
	eachMode(t, func(t *testing.T, mode Mode) {
		env := shimEnv(t, so, dir+"/%d/cpuid", mode, prog)
		for _, cpu := range cpus {
			got := runProg(t, env, "taskset", "-c", strconv.Itoa(cpu), prog, "1")
			if want := fmt.Sprintf("0x1.0: 0xa06a4 %#x 0 0\n", cpu<<24|0x800); got != want {
				t.Errorf("CPU %d: %q, want %q", cpu, got, want)
			}
		}
	})
}

// exitOf returns how cmd ended: "exit N" or the signal's name.
func exitOf(err error) string {
	if err == nil {
		return "exit 0"
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return fmt.Sprint(err)
	}
	if ws := ee.Sys().(syscall.WaitStatus); ws.Signaled() {
		return ws.Signal().String()
	}
	return fmt.Sprintf("exit %d", ee.ExitCode())
}

// TestOtherFaultsKeepDefault: a UD2 the library did not write and a
// null-pointer store still end the program with SIGILL and SIGSEGV, in
// both paths, after an emulated CPUID was answered.
func TestOtherFaultsKeepDefault(t *testing.T) {
	so, prog := build(t)
	tree := vfs.NewDir()
	tree.Put("cpuid", cpuidFile(emulated))
	dir := serve(t, tree)
	eachMode(t, func(t *testing.T, mode Mode) {
		for _, tc := range []struct{ arg, want string }{
			{"ud2", syscall.SIGILL.String()},
			{"segv", syscall.SIGSEGV.String()},
		} {
			cmd := exec.Command(prog, "1", tc.arg, "6")
			cmd.Env = append(os.Environ(), shimEnv(t, so, filepath.Join(dir, "cpuid"), mode, prog)...)
			out, err := cmd.CombinedOutput()
			if got := exitOf(err); got != tc.want || string(out) != "0x1.0: 0xa06a4 0x100800 0x7ffafbbf 0xbfebfbff\n" {
				t.Errorf("%s: %s, output %q; want %s after the emulated leaf 1", tc.arg, got, out, tc.want)
			}
		}
	})
}

func TestMissingDeviceFails(t *testing.T) {
	so, prog := build(t)
	eachMode(t, func(t *testing.T, mode Mode) {
		cmd := exec.Command(prog, "0")
		cmd.Env = append(os.Environ(), shimEnv(t, so, "/nonexistent/cpuid", mode, prog)...)
		out, err := cmd.CombinedOutput()
		if exitOf(err) != "exit 127" || !strings.Contains(string(out), "/nonexistent/cpuid") {
			t.Errorf("shim with a missing file: %v %q, want exit 127 naming the file", err, out)
		}
	})
}

// TestBadSite: a listed address that is not a CPUID instruction of the
// program (one of another build, or outside its code) stops it before
// main with exit 127 and a line naming the address.
func TestBadSite(t *testing.T) {
	so, prog := build(t)
	sites, err := Sites(prog)
	if err != nil || len(sites) == 0 {
		t.Fatalf("Sites(%s): %v, %v", prog, sites, err)
	}
	for _, tc := range []struct {
		name string
		addr uint64
	}{
		{"not CPUID", sites[0].Addr + 1},
		{"ELF header", 0x10},
		{"unmapped", 0x7fff0000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(prog, "1")
			cmd.Env = append(os.Environ(), "LD_PRELOAD="+so, EnvDevice+"=/dev/cpu/0/cpuid", EnvMode+"=patch",
				fmt.Sprintf("%s=%s=%x", EnvSites, prog, tc.addr))
			out, err := cmd.CombinedOutput()
			if want := fmt.Sprintf("CPUID site %#x", tc.addr); exitOf(err) != "exit 127" || !strings.Contains(string(out), want) {
				t.Errorf("%v %q, want exit 127 naming %q", exitOf(err), out, want)
			}
		})
	}
}

// TestUnknownMode: a HWPEMU_CPUID_MODE the library does not know stops
// the program.
func TestUnknownMode(t *testing.T) {
	so, prog := build(t)
	cmd := exec.Command(prog, "1")
	cmd.Env = append(os.Environ(), "LD_PRELOAD="+so, EnvDevice+"=/dev/cpu/0/cpuid", EnvMode+"=emulate")
	out, err := cmd.CombinedOutput()
	if exitOf(err) != "exit 127" || !strings.Contains(string(out), EnvMode) {
		t.Errorf("%v %q, want exit 127 naming %s", exitOf(err), out, EnvMode)
	}
}

// TestRlimitCap checks that with EnvRlimitCap a request above the hard
// limit settles for the hard limit (what turbostat needs to start).
func TestRlimitCap(t *testing.T) {
	so, _ := build(t)
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	want := min(uint64(32768), lim.Max)
	if os.Geteuid() == 0 && hasCap(t, unix.CAP_SYS_RESOURCE) {
		want = 32768 // the kernel grants the raise itself
	}
	got := runProg(t, []string{"LD_PRELOAD=" + so, EnvRlimitCap + "=1"}, "sh", "-c", "ulimit -n 32768 && ulimit -n")
	if strings.TrimSpace(got) != strconv.FormatUint(want, 10) {
		t.Errorf("ulimit -n after asking for 32768: %q, want %d", got, want)
	}
}

func hasCap(t *testing.T, c int) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "CapEff:"); ok {
			var m uint64
			fmt.Sscanf(strings.TrimSpace(v), "%x", &m)
			return m&(1<<c) != 0
		}
	}
	return false
}
