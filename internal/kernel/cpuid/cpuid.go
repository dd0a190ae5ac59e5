// SPDX-License-Identifier: Apache-2.0

// Package cpuid reads CPUID leaves of a chosen logical CPU through the
// kernel's cpuid driver (/dev/cpu/N/cpuid, CONFIG_X86_CPUID), and decodes the
// leaves hwpprobe needs. It never executes the CPUID instruction itself:
// hybrid parts answer differently per CPU, and an emulated machine serves
// these device files.
//
// A read is a 16-byte pread at offset = leaf | subleaf<<32 that returns
// EAX, EBX, ECX and EDX as little-endian 32-bit words
// (arch/x86/kernel/cpuid.c, cpuid_read()).
package cpuid

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/hwpprobe/hwpprobe/internal/kernel/cpudev"
)

// Sentinel errors; errors returned by this package wrap one of them.
var (
	// ErrNoDevice: /dev/cpu/N/cpuid is missing (the cpuid module is not
	// loaded, or the kernel lacks CONFIG_X86_CPUID): `modprobe cpuid`.
	ErrNoDevice = errors.New("cpuid device missing (run: modprobe cpuid)")
	// ErrPermission: the device exists but may not be opened; it is
	// root-only (mode 0600). The same error as msr's.
	ErrPermission = cpudev.ErrPermission
	// ErrOffline: the CPU is offline; the driver's open answers ENXIO.
	// The same error as msr's.
	ErrOffline = cpudev.ErrOffline
	// ErrShortRead: the device returned fewer than 16 bytes.
	ErrShortRead = errors.New("short read from cpuid device")
)

// Regs holds the four output registers of one CPUID leaf.
type Regs struct {
	EAX, EBX, ECX, EDX uint32
}

// Reader returns CPUID leaf/subleaf as seen by one logical CPU.
type Reader interface {
	CPUID(cpu int, leaf, subleaf uint32) (Regs, error)
}

// Dev reads <root>/dev/cpu/N/cpuid, keeping one descriptor per CPU open
// until Close. It is safe for concurrent use.
type Dev struct {
	files *cpudev.Files
}

// Open returns a Dev for the system whose root file system is at root ("/"
// for the running system). Devices are opened lazily, read-only.
func Open(root string) *Dev {
	d := &Dev{}
	d.files = cpudev.New(root, "cpuid", d.openError)
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
		return &cpudev.Error{Path: d.Path(cpu), Err: ErrOffline, OS: err}
	case cpudev.Missing:
		return &cpudev.Error{Path: d.Path(cpu), Err: ErrNoDevice, OS: err}
	}
	return fmt.Errorf("cpu%d: open cpuid device: %w", cpu, err)
}

// CPUID implements Reader.
func (d *Dev) CPUID(cpu int, leaf, subleaf uint32) (Regs, error) {
	f, err := d.files.File(cpu)
	if err != nil {
		return Regs{}, err
	}
	var buf [16]byte
	off := int64(uint64(leaf) | uint64(subleaf)<<32)
	n, err := f.ReadAt(buf[:], off)
	if n < len(buf) {
		if err == nil {
			err = ErrShortRead
		}
		return Regs{}, fmt.Errorf("cpu%d cpuid %#x.%d: %w", cpu, leaf, subleaf, err)
	}
	return Regs{
		EAX: binary.LittleEndian.Uint32(buf[0:]),
		EBX: binary.LittleEndian.Uint32(buf[4:]),
		ECX: binary.LittleEndian.Uint32(buf[8:]),
		EDX: binary.LittleEndian.Uint32(buf[12:]),
	}, nil
}

// Close closes every open device.
func (d *Dev) Close() error {
	return d.files.Close()
}

// Leaf names one CPUID leaf and subleaf.
type Leaf struct {
	Leaf, Subleaf uint32
}

// Map is an in-memory Reader for tests: Map[cpu][Leaf{l, s}]. A leaf absent
// from a present CPU reads as zeros, as the instruction answers for an
// unimplemented leaf below the maximum; an absent CPU is ErrOffline.
type Map map[int]map[Leaf]Regs

// CPUID implements Reader.
func (m Map) CPUID(cpu int, leaf, subleaf uint32) (Regs, error) {
	leaves, ok := m[cpu]
	if !ok {
		return Regs{}, fmt.Errorf("cpu%d: %w", cpu, ErrOffline)
	}
	return leaves[Leaf{leaf, subleaf}], nil
}
