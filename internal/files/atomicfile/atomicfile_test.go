// SPDX-License-Identifier: Apache-2.0

package atomicfile

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// modes runs f with unnamed temporary files (O_TMPFILE) and with named
// ones (file systems without O_TMPFILE).
func modes(t *testing.T, f func(t *testing.T)) {
	for _, named := range []bool{false, true} {
		name := "tmpfile"
		if named {
			name = "named"
		}
		t.Run(name, func(t *testing.T) {
			noTmpfile = named
			t.Cleanup(func() { noTmpfile = false })
			f(t)
		})
	}
}

// listDir returns the names in dir, hidden ones included.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func write(t *testing.T, path string, opts Options, data string) error {
	t.Helper()
	f, err := Create(path, opts)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.WriteString(data); err != nil {
		return err
	}
	return f.Commit()
}

func TestCommitAndAbort(t *testing.T) {
	modes(t, func(t *testing.T) {
		dir := t.TempDir()
		out := filepath.Join(dir, "out.csv")
		f, err := Create(out, Options{})
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("half")
		if _, err := os.Stat(out); err == nil {
			t.Error("the output exists before Commit")
		}
		f.Abort()
		if names := listDir(t, dir); len(names) != 0 {
			t.Errorf("Abort left %v", names)
		}
		if err := write(t, out, Options{}, "a,b\n"); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(out); string(b) != "a,b\n" {
			t.Errorf("content %q", b)
		}
		st, _ := os.Stat(out)
		if st.Mode().Perm()&^0o022 != 0o644&^0o022 || st.Mode().Perm()&0o600 != 0o600 {
			t.Errorf("mode %v, want 0644 less the umask", st.Mode())
		}
		if diff := cmp.Diff([]string{"out.csv"}, listDir(t, dir)); diff != "" {
			t.Errorf("directory (-want +got):\n%s", diff)
		}
	})
}

func TestExisting(t *testing.T) {
	modes(t, func(t *testing.T) {
		dir := t.TempDir()
		out := filepath.Join(dir, "out")
		os.WriteFile(out, []byte("old"), 0o644)
		if err := write(t, out, Options{}, "new"); !errors.Is(err, ErrExists) {
			t.Errorf("without Replace: %v, want ErrExists", err)
		}
		if b, _ := os.ReadFile(out); string(b) != "old" {
			t.Errorf("without Replace the output became %q", b)
		}
		if err := write(t, out, Options{Replace: true}, "new"); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(out); string(b) != "new" {
			t.Errorf("with Replace: %q", b)
		}
		// A symbolic link: its target is replaced, the link stays.
		link := filepath.Join(dir, "link")
		os.Symlink("out", link)
		if err := write(t, link, Options{Replace: true}, "via link"); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(out); string(b) != "via link" {
			t.Errorf("link target %q", b)
		}
		if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("the symbolic link was replaced: %v %v", st, err)
		}
		// Not a regular file: written in place.
		if err := write(t, os.DevNull, Options{Replace: true}, "x"); err != nil {
			t.Errorf("/dev/null: %v", err)
		}
		if st, err := os.Stat(os.DevNull); err != nil || st.Mode()&os.ModeCharDevice == 0 {
			t.Errorf("/dev/null is no longer a device: %v %v", st, err)
		}
		if diff := cmp.Diff([]string{"link", "out"}, listDir(t, dir)); diff != "" {
			t.Errorf("directory (-want +got):\n%s", diff)
		}
	})
}

// TestAppearsMeanwhile: an output created by someone else while ours is
// written is not replaced without Replace.
func TestAppearsMeanwhile(t *testing.T) {
	modes(t, func(t *testing.T) {
		dir := t.TempDir()
		out := filepath.Join(dir, "out")
		f, err := Create(out, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Abort()
		os.WriteFile(out, []byte("theirs"), 0o644)
		f.WriteString("ours")
		if err := f.Commit(); !errors.Is(err, ErrExists) {
			t.Errorf("Commit: %v, want ErrExists", err)
		}
		if b, _ := os.ReadFile(out); string(b) != "theirs" {
			t.Errorf("output %q", b)
		}
		if diff := cmp.Diff([]string{"out"}, listDir(t, dir)); diff != "" {
			t.Errorf("directory (-want +got):\n%s", diff)
		}
	})
}

// TestSameFile: the output may not be an input, by any name.
func TestSameFile(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "run.rec")
	os.WriteFile(in, []byte("recording"), 0o644)
	hard, sym := filepath.Join(dir, "hard"), filepath.Join(dir, "sym")
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	os.Symlink(in, sym)
	dotdot := dir + "/../" + filepath.Base(dir) + "/run.rec"
	for _, tt := range []struct{ out, in string }{
		{in, in}, {hard, in}, {sym, in}, {in, sym}, {dotdot, in}, {dotdot, hard},
	} {
		err := write(t, tt.out, Options{Inputs: []string{"/nonexistent", tt.in}, Replace: true}, "csv")
		if !errors.Is(err, ErrSameFile) {
			t.Errorf("out %s in %s: %v, want ErrSameFile", tt.out, tt.in, err)
		}
	}
	if b, _ := os.ReadFile(in); string(b) != "recording" {
		t.Errorf("the input became %q", b)
	}
	if err := write(t, filepath.Join(dir, "other"), Options{Inputs: []string{in}}, "csv"); err != nil {
		t.Errorf("a different output: %v", err)
	}
}

// TestDiskFull: a write that fails on a full file system leaves nothing,
// not even an empty output.
func TestDiskFull(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs (tests run as root): %v: %s", err, out)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	modes(t, func(t *testing.T) {
		out := filepath.Join(dir, "x")
		err := write(t, out, Options{}, strings.Repeat("x", 1<<20))
		if !errors.Is(err, unix.ENOSPC) {
			t.Errorf("write 1 MiB to 16 KiB: %v, want ENOSPC", err)
		}
		if names := listDir(t, dir); len(names) != 0 {
			t.Errorf("left behind: %v", names)
		}
	})
}
