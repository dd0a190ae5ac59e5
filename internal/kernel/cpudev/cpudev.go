// SPDX-License-Identifier: Apache-2.0

// Package cpudev keeps one read-only descriptor per CPU for a per-CPU
// device file <root>/dev/cpu/N/<name> (the msr and cpuid drivers), and
// classifies the errors opening one can give. The msr and cpuid packages
// build their Dev on it and map the classes to their own sentinel errors.
package cpudev

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

// Sentinel errors shared by the per-CPU device readers: the msr and cpuid
// packages export them under their own names, so errors.Is works with
// either.
var (
	// ErrPermission: the device exists but may not be opened; the msr and
	// cpuid devices are root-only (CAP_SYS_RAWIO for msr).
	ErrPermission = errors.New("permission denied (run as root: sudo)")
	// ErrOffline: the CPU is offline; the driver's open answers ENXIO
	// (or EIO).
	ErrOffline = errors.New("CPU is offline")
)

// Error is a failure to open or read a per-CPU device: it names the
// device and the meaning (a sentinel of this package or of the reader's),
// and errors.Is finds both that sentinel and the OS error (fs.ErrPermission
// as well as ErrPermission). Its text is the path and the sentinel: the OS
// error's own words would repeat it. It has a single Unwrap, to the OS
// error, so that code splitting errors.Join results keeps it whole.
type Error struct {
	Path string
	Err  error // the sentinel
	OS   error // the error the system gave, nil if none
}

func (e *Error) Error() string { return e.Path + ": " + e.Err.Error() }

// Is reports whether target is the sentinel.
func (e *Error) Is(target error) bool { return target == e.Err }

// Unwrap returns the OS error.
func (e *Error) Unwrap() error { return e.OS }

// Files opens <root>/dev/cpu/N/<name> lazily, read-only, and keeps each
// descriptor open until Close. It is safe for concurrent use.
type Files struct {
	root, name string
	openErr    func(cpu int, err error) error

	mu    sync.Mutex
	files map[int]*os.File
}

// New returns Files for device name under root ("/" for the running
// system). openErr turns an error from opening CPU cpu's device into the
// error File returns.
func New(root, name string, openErr func(cpu int, err error) error) *Files {
	return &Files{root: root, name: name, openErr: openErr, files: map[int]*os.File{}}
}

// Path returns the device path for cpu.
func (c *Files) Path(cpu int) string {
	return filepath.Join(c.root, "dev/cpu", strconv.Itoa(cpu), c.name)
}

// File returns the open device of cpu, opening it on first use. An open
// error is passed through openErr and not cached.
func (c *Files) File(cpu int) (*os.File, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f, ok := c.files[cpu]; ok {
		return f, nil
	}
	f, err := os.OpenFile(c.Path(cpu), os.O_RDONLY, 0)
	if err != nil {
		return nil, c.openErr(cpu, err)
	}
	c.files[cpu] = f
	return f, nil
}

// Close closes every open device.
func (c *Files) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for cpu, f := range c.files {
		errs = append(errs, f.Close())
		delete(c.files, cpu)
	}
	return errors.Join(errs...)
}

// OpenError is what an error from opening a per-CPU device means.
type OpenError int

// The classes of OpenErrorOf, tested in this order.
const (
	Other      OpenError = iota // none of the below
	Permission                  // EACCES/EPERM: the device may not be opened
	Offline                     // ENXIO or EIO: the driver refuses an offline CPU
	Missing                     // ENOENT: no device file
)

// OpenErrorOf classifies err, an error from opening a per-CPU device.
func OpenErrorOf(err error) OpenError {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return Permission
	case errors.Is(err, syscall.ENXIO), errors.Is(err, syscall.EIO):
		return Offline
	case errors.Is(err, fs.ErrNotExist):
		return Missing
	}
	return Other
}
