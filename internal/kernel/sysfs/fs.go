// SPDX-License-Identifier: Apache-2.0

// Package sysfs reads the kernel's power-management interfaces under /sys
// and /proc (cpufreq, intel_pstate, amd-pstate, energy_perf_bias, topology,
// powercap) through an FS value rooted at a path, like prometheus/procfs,
// so that tests point it at fixture trees.
package sysfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// FS is a system root: "/" for the running system, or a fixture tree.
type FS struct {
	root string
}

// NewFS returns an FS rooted at root.
func NewFS(root string) FS {
	if root == "" {
		root = "/"
	}
	return FS{root: root}
}

// Root returns the root path.
func (f FS) Root() string { return f.root }

// Path joins elements under the root: Path("sys/devices/system/cpu").
func (f FS) Path(elem ...string) string {
	return filepath.Join(append([]string{f.root}, elem...)...)
}

// ReadString reads a file under the root and trims surrounding whitespace.
func (f FS) ReadString(elem ...string) (string, error) {
	b, err := os.ReadFile(f.Path(elem...))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// ReadInt reads a decimal integer file under the root.
func (f FS) ReadInt(elem ...string) (int64, error) {
	s, err := f.ReadString(elem...)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", f.Path(elem...), err)
	}
	return n, nil
}

// Exists reports whether a path under the root exists.
func (f FS) Exists(elem ...string) bool {
	_, err := os.Stat(f.Path(elem...))
	return err == nil
}

// IsNotExist reports whether err says a file is absent.
func IsNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// EmulatedMarker is the file an emulated machine (hwpemu, package emu)
// places in the CPU sysfs directory; it holds the machine's name. No kernel
// has such a file, so its presence means every figure read is emulated and
// output must say so.
const EmulatedMarker = "sys/devices/system/cpu/hwpemu_machine"

// EmulatedWrites is the file where an emulated machine logs the register
// writes its model makes as the kernel's drivers would (the emulated
// counterpart of the msr:write_msr tracepoint): one line per write,
// "seq time_ns cpu msr old new pid comm" (docs/emulator.md).
const EmulatedWrites = "sys/devices/system/cpu/hwpemu_msr_writes"

// EmulatedLoop is the file where hwpemu says whether the command it runs
// is held to the emulated machine's speed: "closed ..." (its CPU time
// follows the delivered frequencies) or "open ..." (it runs at the host's
// speed); docs/emulator.md, "Closed loop".
const EmulatedLoop = "sys/devices/system/cpu/hwpemu_loop"

// EmulatedVariant is the file where an emulated machine names the model
// variant in force (docs/emulator.md, "Model variants").
const EmulatedVariant = "sys/devices/system/cpu/hwpemu_variant"

// Emulated returns the emulated machine's name, or "" on real hardware.
func (f FS) Emulated() string {
	s, err := f.ReadString(EmulatedMarker)
	if err != nil {
		return ""
	}
	return s
}
