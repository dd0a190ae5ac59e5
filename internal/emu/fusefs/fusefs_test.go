// SPDX-License-Identifier: Apache-2.0

package fusefs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/emu/vfs"
)

// testTree builds a small machine-like tree: an MSR device answering two
// adjacent registers, a counter attribute, a writable governor that refuses
// "busy", a read-only attribute and a symbolic link.
func testTree(t *testing.T) *vfs.Dir {
	t.Helper()
	var counter atomic.Int64
	gov := "powersave"
	root := vfs.NewDir()
	regs := map[int64]uint64{0x770: 1, 0x771: 0x01101f53, 0x774: 0x80002e17}
	root.Put("dev/cpu/0/msr", &vfs.Device{Mode: 0o600, ReadAt: func(p []byte, off int64) (int, error) {
		v, ok := regs[off]
		if !ok || len(p) != 8 {
			return 0, syscall.EIO
		}
		binary.LittleEndian.PutUint64(p, v)
		return 8, nil
	}})
	root.Put("sys/devices/system/cpu/cpu0/counter", vfs.Text(func() string {
		return strconv.FormatInt(counter.Add(1), 10) + strings.Repeat(" ", 100)
	}))
	root.Put("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", &vfs.File{
		Mode: 0o644,
		Read: func() ([]byte, error) { return []byte(gov + "\n"), nil },
		Write: func(b []byte) error {
			s := strings.TrimSpace(string(b))
			switch s {
			case "busy":
				return syscall.EBUSY
			case "performance", "powersave":
				gov = s
				return nil
			}
			return syscall.EINVAL
		},
	})
	root.Put("sys/devices/system/cpu/online", vfs.Const("0"))
	root.Put("sys/devices/system/cpu/cpu0/link", &vfs.Symlink{Target: "cpufreq"})
	return root
}

func mountTest(t *testing.T, tree *vfs.Dir) string {
	t.Helper()
	dir := t.TempDir()
	s, err := Mount(dir, tree, Options{Name: "hwpemu-test", SelfReader: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Unmount(); err != nil {
			t.Error(err)
		}
	})
	return dir
}

func TestDeviceAnswersEachOffset(t *testing.T) {
	dir := mountTest(t, testTree(t))
	f, err := os.Open(filepath.Join(dir, "dev/cpu/0/msr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tests := []struct {
		off  int64
		want uint64
		err  error
	}{
		{0x771, 0x01101f53, nil},
		{0x770, 1, nil}, // the neighbour below, read after: no caching
		{0x774, 0x80002e17, nil},
		{0x772, 0, syscall.EIO},
		{0x771, 0x01101f53, nil},
	}
	for _, tt := range tests {
		var b [8]byte
		n, err := f.ReadAt(b[:], tt.off)
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("pread %#x: err %v, want %v", tt.off, err, tt.err)
			}
			continue
		}
		if err != nil || n != 8 {
			t.Fatalf("pread %#x: %d, %v", tt.off, n, err)
		}
		if got := binary.LittleEndian.Uint64(b[:]); got != tt.want {
			t.Errorf("pread %#x = %#x, want %#x", tt.off, got, tt.want)
		}
	}
	if _, err := os.OpenFile(filepath.Join(dir, "dev/cpu/0/msr"), os.O_WRONLY, 0); !errors.Is(err, syscall.EPERM) {
		t.Errorf("open msr for writing: %v, want EPERM", err)
	}
}

func TestAttributeSemantics(t *testing.T) {
	dir := mountTest(t, testTree(t))
	cnt := filepath.Join(dir, "sys/devices/system/cpu/cpu0/counter")
	read := func(p string) string {
		t.Helper()
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	// Each open and read produces a fresh value: nothing is cached.
	if a, b := read(cnt), read(cnt); a == b {
		t.Errorf("counter read twice gave %q both times", a)
	}
	// A reader taking small pieces sees one value (snapshot at offset 0).
	f, err := os.Open(cnt)
	if err != nil {
		t.Fatal(err)
	}
	var pieces []byte
	buf := make([]byte, 3)
	for {
		n, err := f.Read(buf)
		pieces = append(pieces, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	if got := strings.TrimSpace(string(pieces)); !regexpDigits(got) {
		t.Errorf("piecewise read %q is not one value", got)
	}

	gov := filepath.Join(dir, "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
	if err := os.WriteFile(gov, []byte("performance\n"), 0); err != nil { // O_TRUNC
		t.Fatalf("write governor: %v", err)
	}
	if got := read(gov); got != "performance" {
		t.Errorf("governor after write = %q", got)
	}
	for _, tt := range []struct {
		val  string
		want error
	}{{"busy", syscall.EBUSY}, {"nonsense", syscall.EINVAL}} {
		if err := os.WriteFile(gov, []byte(tt.val), 0); !errors.Is(err, tt.want) {
			t.Errorf("write %q: %v, want %v", tt.val, err, tt.want)
		}
	}
	if got := read(gov); got != "performance" {
		t.Errorf("governor after refused writes = %q", got)
	}
	// Root bypasses mode bits; a file without a store function still
	// refuses writing, as kernfs does.
	if _, err := os.OpenFile(filepath.Join(dir, "sys/devices/system/cpu/online"), os.O_WRONLY, 0); !errors.Is(err, syscall.EACCES) {
		t.Errorf("open read-only attribute for writing: %v, want EACCES", err)
	}
}

func regexpDigits(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

func TestStatAndReaddir(t *testing.T) {
	dir := mountTest(t, testTree(t))
	type st struct {
		Mode os.FileMode
		Size int64
	}
	got := map[string]st{}
	for _, p := range []string{"dev/cpu/0/msr", "sys/devices/system/cpu/online", "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "sys/devices/system/cpu/cpu0/link", "dev/cpu"} {
		fi, err := os.Lstat(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		s := st{Mode: fi.Mode()}
		if fi.Mode().IsRegular() {
			s.Size = fi.Size()
		}
		got[p] = s
	}
	want := map[string]st{
		"dev/cpu/0/msr":                 {0o600, 0},
		"sys/devices/system/cpu/online": {0o444, 4096},
		"sys/devices/system/cpu/cpu0/cpufreq/scaling_governor": {0o644, 4096},
		"sys/devices/system/cpu/cpu0/link":                     {os.ModeSymlink | 0o777, 0},
		"dev/cpu":                                              {os.ModeDir | 0o755, 0},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("stat (-want +got):\n%s", d)
	}
	ents, err := os.ReadDir(filepath.Join(dir, "sys/devices/system/cpu/cpu0"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if d := cmp.Diff([]string{"counter", "cpufreq", "link"}, names); d != "" {
		t.Errorf("readdir (-want +got):\n%s", d)
	}
	if l, err := os.Readlink(filepath.Join(dir, "sys/devices/system/cpu/cpu0/link")); err != nil || l != "cpufreq" {
		t.Errorf("readlink = %q, %v", l, err)
	}
}

// TestOtherUsers checks allow_other and default_permissions: an
// unprivileged user reads attributes but not the 0600 MSR device.
func TestOtherUsers(t *testing.T) {
	dir := mountTest(t, testTree(t))
	if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	nobody := &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	tests := []struct {
		path string
		ok   bool
	}{
		{"sys/devices/system/cpu/online", true},
		{"dev/cpu/0/msr", false},
	}
	for _, tt := range tests {
		cmd := exec.Command("cat", filepath.Join(dir, tt.path))
		cmd.SysProcAttr = nobody
		out, err := cmd.CombinedOutput()
		if (err == nil) != tt.ok {
			t.Errorf("cat %s as nobody: %v %s, want ok=%v", tt.path, err, out, tt.ok)
		}
		if !tt.ok && !strings.Contains(string(out), "Permission denied") {
			t.Errorf("cat %s as nobody: %q, want Permission denied", tt.path, out)
		}
	}
}

func TestMountErrors(t *testing.T) {
	if _, err := Mount(filepath.Join(t.TempDir(), "missing"), vfs.NewDir(), Options{}); err == nil {
		t.Error("mount on a missing directory succeeded")
	}
	if _, err := Mount(t.TempDir(), nil, Options{}); err == nil {
		t.Error("mount of a nil tree succeeded")
	}
}

// TestUnmountRemovesMount checks that Unmount leaves nothing in
// mountinfo.
func TestUnmountRemovesMount(t *testing.T) {
	dir := t.TempDir()
	name := fmt.Sprintf("hwpemu-unmount-%d", os.Getpid())
	s, err := Mount(dir, testTree(t), Options{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(mountinfo(t), name) {
		t.Fatalf("mount %s not in mountinfo", name)
	}
	if err := s.Unmount(); err != nil {
		t.Fatal(err)
	}
	s.Wait()
	if strings.Contains(mountinfo(t), name) {
		t.Errorf("mount %s still in mountinfo after Unmount", name)
	}
}

func mountinfo(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// BenchmarkDevicePread measures one 8-byte pread of an MSR through the
// FUSE mount; its peer, BenchmarkDeviceReadAtDirect, calls the same
// vfs.Device in process, so the ratio is the cost of the kernel round trip.
func BenchmarkDevicePread(b *testing.B) {
	dir := b.TempDir()
	s, err := Mount(dir, benchTree(), Options{Name: "hwpemu-bench", SelfReader: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Unmount()
	f, err := os.Open(filepath.Join(dir, "msr"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var buf [8]byte
	for b.Loop() {
		if _, err := f.ReadAt(buf[:], 0x774); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDeviceReadAtDirect is BenchmarkDevicePread's in-process peer.
func BenchmarkDeviceReadAtDirect(b *testing.B) {
	n, _ := benchTree().Lookup("msr")
	d := n.(*vfs.Device)
	var buf [8]byte
	for b.Loop() {
		if _, err := d.ReadAt(buf[:], 0x774); err != nil {
			b.Fatal(err)
		}
	}
}

func benchTree() *vfs.Dir {
	root := vfs.NewDir()
	root.Set("msr", &vfs.Device{Mode: 0o600, ReadAt: func(p []byte, off int64) (int, error) {
		if off != 0x774 || len(p) != 8 {
			return 0, syscall.EIO
		}
		binary.LittleEndian.PutUint64(p, 0x80002e17)
		return 8, nil
	}})
	return root
}

// TestChildrenDoNotInheritFUSE: programs started after Mount must not hold
// /dev/fuse; one that did would keep a dead server's connection, and
// readers of the mount would wait for ever.
func TestChildrenDoNotInheritFUSE(t *testing.T) {
	mountTest(t, testTree(t))
	out, err := exec.Command("ls", "-l", "/proc/self/fd").CombinedOutput()
	if err != nil {
		t.Fatalf("ls: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "/dev/fuse") {
		t.Errorf("a child inherited /dev/fuse:\n%s", out)
	}
}

// TestWriteCaller checks that a store learns which process wrote: this
// test's own process (any of its threads: the thread group id is the
// process id) and a shell it starts, named "sh" as /proc/PID/comm has it.
func TestWriteCaller(t *testing.T) {
	var got []vfs.Caller
	root := vfs.NewDir()
	root.Put("attr", &vfs.File{Mode: 0o644,
		Read:    func() ([]byte, error) { return []byte("x\n"), nil },
		WriteBy: func(c vfs.Caller, _ []byte) error { got = append(got, c); return nil },
	})
	dir := mountTest(t, root)
	attr := filepath.Join(dir, "attr")
	if err := os.WriteFile(attr, []byte("1\n"), 0); err != nil {
		t.Fatal(err)
	}
	sh := exec.Command("sh", "-c", "echo 2 > "+attr)
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("sh: %v\n%s", err, out)
	}
	self, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	want := []vfs.Caller{
		{PID: os.Getpid(), Comm: strings.TrimSpace(string(self))},
		{PID: sh.Process.Pid, Comm: "sh"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("callers (-want +got):\n%s", diff)
	}
}

func TestResolveCallerGone(t *testing.T) {
	// A thread that has exited: its id, no name.
	got := resolveCaller(t.TempDir(), 123)
	if diff := cmp.Diff(vfs.Caller{PID: 123}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestMountMakesNoRequest: by the time Mount returns, the server has been
// asked nothing but INIT. go-fuse's fs.Mount looks up, opens, polls and
// closes a file of its own mount before returning; a server killed during
// that close waits for itself in uninterruptible sleep.
func TestMountMakesNoRequest(t *testing.T) {
	logged := &syncBuffer{}
	log.SetOutput(logged)
	defer log.SetOutput(os.Stderr)
	s, err := Mount(t.TempDir(), testTree(t), Options{Name: "hwpemu-norequest", Debug: true})
	if err != nil {
		t.Fatal(err)
	}
	out := logged.String() // read before anything else can reach the server
	if err := s.Unmount(); err != nil {
		t.Error(err)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "rx ") && !strings.Contains(l, "INIT") {
			t.Errorf("request before any reader: %s", l)
		}
	}
	if !strings.Contains(out, "INIT") {
		t.Errorf("no INIT in the debug log, so the check above proves nothing:\n%s", out)
	}
}

// syncBuffer is a strings.Builder safe for the logger's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestCloseNeverWaitsForServer: closing a file or device of the mount
// sends no FLUSH (FOPEN_NOFLUSH), so a reader's close(2), which would wait
// for that answer without any timeout, never depends on the server.
func TestCloseNeverWaitsForServer(t *testing.T) {
	logged := &syncBuffer{}
	log.SetOutput(logged)
	defer log.SetOutput(os.Stderr)
	dir := t.TempDir()
	s, err := Mount(dir, testTree(t), Options{Name: "hwpemu-noflush", Debug: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Unmount()
	// Other processes read, so the log is complete once they have exited.
	for _, args := range [][]string{
		{"cat", filepath.Join(dir, "sys/devices/system/cpu/cpu0/counter")},
		{"dd", "if=" + filepath.Join(dir, "dev/cpu/0/msr"), "bs=8", "count=1", "skip=238", "status=none"},
		{"sh", "-c", "echo performance > " + filepath.Join(dir, "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")},
	} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%q: %v\n%s", args, err, out)
		}
	}
	out := logged.String()
	if !strings.Contains(out, "OPEN") {
		t.Fatalf("no OPEN in the debug log, so the check below proves nothing:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "rx ") && strings.Contains(l, ": FLUSH") {
			t.Errorf("a close waited for the server: %s", l)
		}
	}
}
