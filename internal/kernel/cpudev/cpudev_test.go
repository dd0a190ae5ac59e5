// SPDX-License-Identifier: Apache-2.0

package cpudev

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestOpenErrorOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want OpenError
	}{
		{&fs.PathError{Op: "open", Err: syscall.EACCES}, Permission},
		{&fs.PathError{Op: "open", Err: syscall.EPERM}, Permission},
		{&fs.PathError{Op: "open", Err: syscall.ENXIO}, Offline},
		{&fs.PathError{Op: "open", Err: syscall.EIO}, Offline},
		{&fs.PathError{Op: "open", Err: syscall.ENOENT}, Missing},
		{&fs.PathError{Op: "open", Err: syscall.EBUSY}, Other},
	} {
		if got := OpenErrorOf(c.err); got != c.want {
			t.Errorf("OpenErrorOf(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

func TestFilesCachesAndMapsErrors(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "dev/cpu/0"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "dev/cpu/0/msr"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	errMissing := errors.New("missing")
	c := New(root, "msr", func(cpu int, err error) error {
		if OpenErrorOf(err) == Missing {
			return fmt.Errorf("cpu%d: %w", cpu, errMissing)
		}
		return err
	})
	defer c.Close()
	if got, want := c.Path(3), filepath.Join(root, "dev/cpu/3/msr"); got != want {
		t.Errorf("Path(3) = %q, want %q", got, want)
	}
	f1, err := c.File(0)
	if err != nil {
		t.Fatal(err)
	}
	f2, err := c.File(0)
	if err != nil || f1 != f2 {
		t.Errorf("second File(0) = %p, %v; want the same descriptor %p", f2, err, f1)
	}
	if _, err := c.File(1); !errors.Is(err, errMissing) {
		t.Errorf("File(1) error %v, want the openErr mapping", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if f3, err := c.File(0); err != nil || f3 == f1 {
		t.Errorf("File(0) after Close = %p, %v; want a fresh descriptor", f3, err)
	}
}

// TestError: a device error is found by its sentinel and by the OS error
// it wraps, prints the path and the sentinel only, and is one error to
// code that splits errors.Join results (it has no Unwrap() []error).
func TestError(t *testing.T) {
	osErr := &fs.PathError{Op: "open", Path: "/dev/cpu/0/msr", Err: syscall.EACCES}
	err := fmt.Errorf("read: %w", &Error{Path: "/dev/cpu/0/msr", Err: ErrPermission, OS: osErr})
	for _, target := range []error{ErrPermission, fs.ErrPermission, syscall.EACCES} {
		if !errors.Is(err, target) {
			t.Errorf("errors.Is(%v, %v) = false", err, target)
		}
	}
	if errors.Is(err, ErrOffline) {
		t.Errorf("errors.Is(%v, ErrOffline) = true", err)
	}
	if got, want := err.Error(), "read: /dev/cpu/0/msr: permission denied (run as root: sudo)"; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
	if _, ok := errors.Unwrap(err).(interface{ Unwrap() []error }); ok {
		t.Error("a device error splits like errors.Join")
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe != osErr {
		t.Errorf("errors.As found %v, want the OS error", pe)
	}
}
