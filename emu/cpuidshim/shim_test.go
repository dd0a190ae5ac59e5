package cpuidshim

import (
	"encoding/binary"
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

	"github.com/hwpprobe/hwpprobe/emu/fusefs"
	"github.com/hwpprobe/hwpprobe/emu/vfs"
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
	if out, err := exec.Command(compiler(), "-O2", "-o", prog, "testdata/cpuid.c").CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", compiler(), err, out)
	}
	return so, prog
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
	got := runProg(t, Env(so, "/dev/cpu/0/cpuid"), argv...)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("CPUID through the shim and the real device differs from the instruction (-want +got):\n%s", d)
	}
}

// TestEmulatedLeaves serves a cpuid file through FUSE (as hwpemu does) that
// knows leaves 1 and 6 only: those come from the file, the rest from the
// real CPU.
func TestEmulatedLeaves(t *testing.T) {
	so, prog := build(t)
	leaves := map[uint64][4]uint32{
		// Meteor Lake (family 6 model 0xAA stepping 4): signature 0xa06a4.
		1: {0x000a06a4, 0x00100800, 0x7ffafbbf, 0xbfebfbff},
		// SDM CPUID leaf 6: EAX bits 7-11 HWP, HWP notification, activity
		// window, EPP, package request (0xf87 with DTS, turbo, ARAT);
		// ECX bit 0 APERF/MPERF, bit 3 EPB. The same value the
		// repository's shared cpuid-shim README uses for HWP machines.
		6: {0xf87, 0, 0x9, 0},
	}
	tree := vfs.NewDir()
	tree.Put("cpuid", &vfs.Device{Mode: 0o444, ReadAt: func(p []byte, off int64) (int, error) {
		r, ok := leaves[uint64(off)]
		if !ok || len(p) != 16 {
			return 0, syscall.EIO
		}
		for i, v := range r {
			binary.LittleEndian.PutUint32(p[4*i:], v)
		}
		return 16, nil
	}})
	dir := t.TempDir()
	srv, err := fusefs.Mount(dir, tree, fusefs.Options{Name: "cpuidshim-test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Unmount() })

	real0 := runProg(t, nil, prog, "0")
	// Leaf 6 with ECX 0xffffffff, as a caller that does not set ECX for a
	// leaf without subleaves may leave it: answered as subleaf 0, not by
	// the real CPU (the offset would be negative).
	got := runProg(t, Env(so, filepath.Join(dir, "cpuid")), prog, "1", "6", "0", "6.0xffffffff")
	want := "0x1.0: 0xa06a4 0x100800 0x7ffafbbf 0xbfebfbff\n" +
		"0x6.0: 0xf87 0 0x9 0\n" + real0 + "0x6.4294967295: 0xf87 0 0x9 0\n"
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("CPUID with the emulated file (-want +got):\n%s", d)
	}
}

func TestMissingDeviceFails(t *testing.T) {
	so, prog := build(t)
	cmd := exec.Command(prog, "0")
	cmd.Env = append(os.Environ(), Env(so, "/nonexistent/cpuid")...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 127 || !strings.Contains(string(out), "/nonexistent/cpuid") {
		t.Errorf("shim with a missing file: %v %q, want exit 127 naming the file", err, out)
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
