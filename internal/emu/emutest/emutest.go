// SPDX-License-Identifier: Apache-2.0

// Package emutest gives tests an emulated machine (internal/emu, a
// description in internal/emu/machines or a file) as a plain directory
// tree under a temporary root, for readers that take a root path, with
// the machine itself for its registers and CPUID leaves, which a plain
// file cannot serve.
package emutest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

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
