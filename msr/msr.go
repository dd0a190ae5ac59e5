// SPDX-License-Identifier: Apache-2.0

// Package msr reads x86 model-specific registers through the kernel's msr
// driver (/dev/cpu/N/msr, CONFIG_X86_MSR). It only ever opens the devices
// read-only: hwpprobe never writes an MSR.
//
// A read is an 8-byte pread at offset = MSR number. The driver answers EIO
// for a register the CPU does not implement (the rdmsr faulted), which this
// package reports as ErrUnsupported so that callers show "n/a", never 0.
package msr

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/hwpprobe/hwpprobe/internal/kernel/cpudev"
)

// Sentinel errors. Errors returned by this package wrap one of them, so
// callers test with errors.Is.
var (
	// ErrUnsupported: the CPU does not implement the register (EIO from
	// the driver: rdmsr raised #GP).
	ErrUnsupported = errors.New("register not implemented on this CPU")
	// ErrNoDevice: /dev/cpu/N/msr is missing but the kernel has an msr
	// driver (module not loaded): `modprobe msr` fixes it.
	ErrNoDevice = errors.New("msr device missing (run: modprobe msr)")
	// ErrNoDriver: the running kernel has no msr driver at all
	// (CONFIG_X86_MSR unset, no module), so no MSR can be read.
	ErrNoDriver = errors.New("kernel has no msr driver (CONFIG_X86_MSR is off)")
	// ErrPermission: the device exists but may not be opened; reading
	// MSRs needs root (CAP_SYS_RAWIO). The same error as cpuid's.
	ErrPermission = cpudev.ErrPermission
	// ErrOffline: the CPU is offline; the driver refuses its device. The
	// same error as cpuid's.
	ErrOffline = cpudev.ErrOffline
)

// Reader reads one MSR of one logical CPU. Implementations must be safe for
// use by one goroutine at a time per CPU.
type Reader interface {
	ReadMSR(cpu int, reg uint32) (uint64, error)
}

// Dev reads MSRs from <root>/dev/cpu/N/msr, keeping one descriptor per CPU
// open until Close.
type Dev struct {
	root  string
	files *cpudev.Files
}

// Open returns a Dev for the system whose root file system is at root
// ("/" for the running system). Devices are opened lazily on first read.
func Open(root string) *Dev {
	d := &Dev{root: root}
	d.files = cpudev.New(root, "msr", d.openError)
	return d
}

// Path returns the device path for cpu.
func (d *Dev) Path(cpu int) string {
	return d.files.Path(cpu)
}

func (d *Dev) openError(cpu int, err error) error {
	switch cpudev.OpenErrorOf(err) {
	case cpudev.Permission:
		return &cpudev.Error{Path: d.Path(cpu), Err: ErrPermission, OS: err}
	case cpudev.Offline:
		// The driver's open returns ENXIO for an offline CPU.
		return &cpudev.Error{Path: d.Path(cpu), Err: ErrOffline, OS: err}
	case cpudev.Missing:
		if _, serr := os.Stat(filepath.Join(d.root, "sys/devices/system/cpu", fmt.Sprint("cpu", cpu))); serr != nil {
			return fmt.Errorf("cpu%d: no such CPU", cpu)
		}
		if !HasDriver(d.root) {
			return &cpudev.Error{Path: d.Path(cpu), Err: ErrNoDriver, OS: err}
		}
		return &cpudev.Error{Path: d.Path(cpu), Err: ErrNoDevice, OS: err}
	}
	return fmt.Errorf("cpu%d: open msr device: %w", cpu, err)
}

// ReadMSR reads register reg of cpu.
func (d *Dev) ReadMSR(cpu int, reg uint32) (uint64, error) {
	f, err := d.files.File(cpu)
	if err != nil {
		return 0, err
	}
	var buf [8]byte
	n, err := f.ReadAt(buf[:], int64(reg))
	switch {
	case errors.Is(err, syscall.EIO):
		return 0, fmt.Errorf("cpu%d msr %#x: %w", cpu, reg, ErrUnsupported)
	case err != nil && n < 8:
		return 0, fmt.Errorf("cpu%d msr %#x: %w", cpu, reg, err)
	}
	return binary.LittleEndian.Uint64(buf[:]), nil
}

// Close closes every open device.
func (d *Dev) Close() error {
	return d.files.Close()
}

// HasDriver reports whether the kernel rooted at root can provide
// /dev/cpu/N/msr: the driver is loaded (a "msr" char device is registered
// or the cpu/msr0 class device exists) or available as a module.
func HasDriver(root string) bool {
	if _, err := os.Stat(filepath.Join(root, "sys/class/msr")); err == nil {
		return true
	}
	if _, err := os.Stat(filepath.Join(root, "sys/module/msr")); err == nil {
		return true
	}
	rel, err := os.ReadFile(filepath.Join(root, "proc/sys/kernel/osrelease"))
	if err != nil {
		return true // cannot tell: suggest modprobe
	}
	release := strings.TrimSpace(string(rel))
	for _, name := range []string{"kernel/arch/x86/kernel/msr.ko", "kernel/arch/x86/kernel/msr.ko.xz", "kernel/arch/x86/kernel/msr.ko.zst"} {
		if _, err := os.Stat(filepath.Join(root, "lib/modules", release, name)); err == nil {
			return true
		}
	}
	return false
}

// Map is an in-memory Reader for tests: Map[cpu][reg] is the value; a
// register absent from a present CPU reads as ErrUnsupported, an absent CPU
// as ErrOffline.
type Map map[int]map[uint32]uint64

// ReadMSR implements Reader.
func (m Map) ReadMSR(cpu int, reg uint32) (uint64, error) {
	regs, ok := m[cpu]
	if !ok {
		return 0, fmt.Errorf("cpu%d: %w", cpu, ErrOffline)
	}
	v, ok := regs[reg]
	if !ok {
		return 0, fmt.Errorf("cpu%d msr %#x: %w", cpu, reg, ErrUnsupported)
	}
	return v, nil
}
