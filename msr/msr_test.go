// SPDX-License-Identifier: Apache-2.0

package msr

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hwpprobe/hwpprobe/internal/kernel/cpuid"
)

func TestDevMissingDriver(t *testing.T) {
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "sys/devices/system/cpu/cpu0"), 0o755))
	must(t, os.MkdirAll(filepath.Join(root, "proc/sys/kernel"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "proc/sys/kernel/osrelease"), []byte("6.18.0\n"), 0o644))
	d := Open(root)
	defer d.Close()
	if _, err := d.ReadMSR(0, 0x774); !errors.Is(err, ErrNoDriver) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no driver: err = %v, want ErrNoDriver wrapping ENOENT", err)
	}
	// With the module on disk the advice is modprobe.
	mod := filepath.Join(root, "lib/modules/6.18.0/kernel/arch/x86/kernel")
	must(t, os.MkdirAll(mod, 0o755))
	must(t, os.WriteFile(filepath.Join(mod, "msr.ko.xz"), nil, 0o644))
	if _, err := d.ReadMSR(0, 0x774); !errors.Is(err, ErrNoDevice) {
		t.Errorf("module not loaded: err = %v, want ErrNoDevice", err)
	}
	if _, err := d.ReadMSR(5, 0x774); err == nil || err.Error() != "cpu5: no such CPU" {
		t.Errorf("absent CPU: err = %v", err)
	}
}

// TestDevRead reads a plain file standing in for the device. A regular
// file cannot emulate adjacent MSRs (their 8-byte values overlap), so the
// test reads a single register.
func TestDevRead(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "dev/cpu/0")
	must(t, os.MkdirAll(dir, 0o755))
	buf := make([]byte, 0x774+8)
	copy(buf[0x774:], []byte{0x17, 0x2e, 0x00, 0x80, 0, 0, 0, 0}) // 0x80002e17
	must(t, os.WriteFile(filepath.Join(dir, "msr"), buf, 0o400))
	d := Open(root)
	defer d.Close()
	v, err := d.ReadMSR(0, 0x774)
	if err != nil || v != 0x80002e17 {
		t.Fatalf("ReadMSR = %#x, %v; want 0x80002e17", v, err)
	}
	// Beyond the end of the file: short read, an error, never a zero value.
	if _, err := d.ReadMSR(0, 0x1000); err == nil {
		t.Error("short read returned no error")
	}
}

// TestDevPermission opens a device the caller may not read. Run as root
// (as CI does), the check re-runs itself as user nobody, since root
// bypasses file modes.
func TestDevPermission(t *testing.T) {
	root := os.Getenv("MSR_TEST_ROOT")
	if root == "" {
		root = t.TempDir()
		must(t, os.Chmod(root, 0o755))
		must(t, os.Chmod(filepath.Dir(root), 0o755))
		dir := filepath.Join(root, "dev/cpu/0")
		must(t, os.MkdirAll(dir, 0o755))
		must(t, os.WriteFile(filepath.Join(dir, "msr"), make([]byte, 8), 0o600))
		if os.Geteuid() == 0 {
			// The test binary's own directory is private to root: copy it.
			bin := filepath.Join(root, "msr.test")
			exe, err := os.ReadFile(os.Args[0])
			must(t, err)
			must(t, os.WriteFile(bin, exe, 0o755))
			cmd := exec.Command(bin, "-test.run=^TestDevPermission$", "-test.v")
			cmd.Env = append(os.Environ(), "MSR_TEST_ROOT="+root)
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("as nobody: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), "--- PASS: TestDevPermission") {
				t.Fatalf("as nobody, the test did not pass:\n%s", out)
			}
			return
		}
	}
	// The sentinel and the OS error are both wrapped, and the sentinel is
	// cpuid's too (one definition, internal/kernel/cpudev).
	_, err := Open(root).ReadMSR(0, 0)
	if !errors.Is(err, ErrPermission) || !errors.Is(err, fs.ErrPermission) || !errors.Is(err, cpuid.ErrPermission) {
		t.Errorf("err = %v, want ErrPermission wrapping the OS's EACCES", err)
	}
	if want := filepath.Join(root, "dev/cpu/0/msr") + ": permission denied (run as root: sudo)"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

func TestMap(t *testing.T) {
	m := Map{0: {0x774: 5}}
	if v, err := m.ReadMSR(0, 0x774); err != nil || v != 5 {
		t.Errorf("ReadMSR = %v, %v", v, err)
	}
	if _, err := m.ReadMSR(0, 0x771); !errors.Is(err, ErrUnsupported) {
		t.Errorf("missing register: %v", err)
	}
	if _, err := m.ReadMSR(1, 0x771); !errors.Is(err, ErrOffline) {
		t.Errorf("missing CPU: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestHasDriverEmptyRelease: an empty or newline-less osrelease must not
// panic or cut the release name.
func TestHasDriverEmptyRelease(t *testing.T) {
	for _, rel := range []string{"", "6.18.0"} {
		root := t.TempDir()
		must(t, os.MkdirAll(filepath.Join(root, "proc/sys/kernel"), 0o755))
		must(t, os.WriteFile(filepath.Join(root, "proc/sys/kernel/osrelease"), []byte(rel), 0o644))
		mod := filepath.Join(root, "lib/modules/6.18.0/kernel/arch/x86/kernel")
		must(t, os.MkdirAll(mod, 0o755))
		must(t, os.WriteFile(filepath.Join(mod, "msr.ko"), nil, 0o644))
		if got, want := HasDriver(root), rel != ""; got != want {
			t.Errorf("osrelease %q: HasDriver = %v, want %v", rel, got, want)
		}
	}
}
