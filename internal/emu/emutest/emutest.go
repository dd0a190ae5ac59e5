// SPDX-License-Identifier: Apache-2.0

// Package emutest gives tests an emulated machine (internal/emu, a
// description in internal/emu/machines or a file) as a plain directory
// tree under a temporary root, for readers that take a root path, with
// the machine itself for its registers and CPUID leaves, which a plain
// file cannot serve.
package emutest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hwpprobe/hwpprobe/msr"
	"github.com/hwpprobe/hwpprobe/rapl"

	"github.com/hwpprobe/hwpprobe/internal/emu"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpuid"
)

// epoch is the fixed clock of the machines Root loads, so that counters
// and energy read the same in every run.
var epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// Root loads the machine name (a built-in name or a description file)
// idle, at a fixed time, writes its tree (emu.WriteTree) under a new
// temporary directory and returns that root and the machine (its
// ReadMSR is an msr.Reader; CPUID adapts its CPUID leaves).
func Root(tb testing.TB, name string) (string, *emu.Machine) {
	tb.Helper()
	m, err := emu.Load(name, emu.WithLoad(emu.ConstLoad{0}), emu.WithClock(func() time.Time { return epoch }))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { m.Close() })
	root := tb.TempDir()
	if err := emu.WriteTree(m.Tree(), root); err != nil {
		tb.Fatal(err)
	}
	return root, m
}

// CPUID is a cpuid.Reader of an emulated machine's leaves.
type CPUID struct{ M *emu.Machine }

// CPUID returns the leaf as the machine's /dev/cpu/N/cpuid answers it.
func (c CPUID) CPUID(cpu int, leaf, subleaf uint32) (cpuid.Regs, error) {
	r, err := c.M.CPUID(cpu, leaf, subleaf)
	return cpuid.Regs{EAX: r[0], EBX: r[1], ECX: r[2], EDX: r[3]}, err
}

// Set writes content and a newline, as sysfs ends its files, to the file
// path under root, making its directory: a test's change to the tree Root
// wrote.
func Set(tb testing.TB, root, path, content string) {
	tb.Helper()
	p := filepath.Join(root, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content+"\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// Remove deletes the file or directory path under root and everything
// below it: a test's change to the tree Root wrote.
func Remove(tb testing.TB, root, path string) {
	tb.Helper()
	if err := os.RemoveAll(filepath.Join(root, path)); err != nil {
		tb.Fatal(err)
	}
}

// NoMSRDriver writes a kernel release under root with no msr module
// under its lib/modules: msr.HasDriver then finds no msr driver at all,
// as on the development VMs. The emulator does not serve
// proc/sys/kernel (it is the host kernel's), so a tree Root wrote has
// none.
func NoMSRDriver(tb testing.TB, root string) {
	tb.Helper()
	Set(tb, root, "proc/sys/kernel/osrelease", "6.18.0-hwpprobe-fixture")
}

// Registers reads every register the machine's description lists on
// every online CPU, now, into an msr.Map: a copy a test can change
// (set, clear or delete a register) before handing it to a reader, as
// WriteTree's files are a copy of the tree. Registers the CPU lacks
// (EIO) are left out, as msr.Map then answers msr.ErrUnsupported.
func Registers(tb testing.TB, m *emu.Machine) msr.Map {
	tb.Helper()
	out := msr.Map{}
	d := m.Description()
	for n := range d.NumCPUs() {
		regs, online := map[uint32]uint64{}, true
		for _, r := range d.MSRs {
			v, err := m.ReadMSR(n, r.Addr)
			if errors.Is(err, syscall.ENXIO) { // offline: absent from the map
				online = false
				break
			}
			if errors.Is(err, syscall.EIO) {
				continue
			}
			if err != nil {
				tb.Fatal(err)
			}
			regs[r.Addr] = v
		}
		if online {
			out[n] = regs
		}
	}
	return out
}

// Powercap writes the RAPL zone sys/class/powercap/<id> under root (for
// example "intel-rapl-mmio:0", name "package-0"): enabled, and
// constraint_0 (long_term, PL1) and constraint_1 (short_term, PL2)
// converted from a MSR_PKG_POWER_LIMIT value with the RAPL power unit
// register units as drivers/powercap/intel_rapl_common.c does
// (rapl.PowercapConstraints).
func Powercap(tb testing.TB, root, id, name string, powerLimit, units uint64) {
	tb.Helper()
	dir := "sys/class/powercap/" + id + "/"
	Set(tb, root, dir+"name", name)
	Set(tb, root, dir+"enabled", "1")
	for i, c := range rapl.PowercapConstraints(powerLimit, units) {
		pre := fmt.Sprintf("%sconstraint_%d_", dir, i)
		Set(tb, root, pre+"name", c.Name)
		Set(tb, root, pre+"power_limit_uw", fmt.Sprint(c.PowerLimitUW))
		Set(tb, root, pre+"time_window_us", fmt.Sprint(c.TimeWindowUS))
	}
}
