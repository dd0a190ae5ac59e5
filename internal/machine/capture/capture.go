// SPDX-License-Identifier: Apache-2.0

// Package capture reads a real machine once and turns it into an emulator
// description (package emu): /proc/cpuinfo, the CPU lists, the topology,
// cache, cpufreq, intel_pstate, amd_pstate, EPB and powercap sysfs files
// verbatim, every CPUID leaf and subleaf of every CPU through
// /dev/cpu/N/cpuid, and every register of the catalog (package regs)
// through /dev/cpu/N/msr where the CPU implements it. `hwpemu run` then
// serves the description, so a maintainer can run hwpprobe, turbostat or
// x86_energy_perf_policy on a bug reporter's machine. What could not be
// read is listed in the description (Unreadable), never invented.
// docs/capture.md documents it.
package capture

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hwpprobe/hwpprobe/internal/emu"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
)

// ErrBadCPUList is wrapped when the CPU selection cannot be parsed or
// names no present CPU.
var ErrBadCPUList = errors.New("bad CPU list")

// ErrNoCPUInfo is wrapped when /proc/cpuinfo cannot be read or lacks what
// a description needs (vendor, family, model, bogomips).
var ErrNoCPUInfo = errors.New("cannot read the CPU's identity from /proc/cpuinfo")

// Options says what to capture.
type Options struct {
	Root string           // system root holding proc/, sys/ and dev/ ("/")
	CPUs string           // perf-syntax CPU list; "" for every present CPU
	Now  func() time.Time // default time.Now
	Tool string           // the program and version, for the provenance
}

// Capture reads the machine under opts.Root and returns its description.
// The description passes emu.ParseDescription; d.Unreadable lists what
// could not be read.
func Capture(opts Options) (*emu.Description, error) {
	if opts.Root == "" {
		opts.Root = "/"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := &capturer{root: opts.Root, visited: map[string]string{}}
	present, err := sysfs.NewFS(c.root).PresentCPUs()
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	online, err := sysfs.NewFS(c.root).OnlineCPUs()
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	sel, err := cpus.Select(opts.CPUs, online, present)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadCPUList, err)
	}
	c.selected = sel
	info, err := c.cpuinfo()
	if err != nil {
		return nil, err
	}
	d := &emu.Description{Captured: c.provenance(opts)}
	if err := c.describe(d, info, present, online); err != nil {
		return nil, err
	}
	if skipped := present.Minus(sel); len(skipped) > 0 && opts.CPUs != "" {
		c.unreadable("CPUs "+skipped.String(), fmt.Errorf("not captured: -C %s", opts.CPUs))
	}
	c.captureFiles(present)
	d.Files = c.files
	d.Unreadable = c.missing
	return d, nil
}

// capturer accumulates what one capture read.
type capturer struct {
	root     string
	selected cpus.List
	files    []emu.FileEntry
	missing  []emu.Unreadable
	visited  map[string]string // real directory path -> where it was captured
}

func (c *capturer) path(rel string) string { return path.Join(c.root, rel) }

func (c *capturer) unreadable(p string, err error) {
	c.missing = append(c.missing, emu.Unreadable{Path: p, Error: errText(err)})
}

// errText is an error's message without the root prefix of its path.
func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func (c *capturer) provenance(opts Options) *emu.Captured {
	p := &emu.Captured{Date: opts.Now().UTC().Format(time.RFC3339), EUID: os.Geteuid(), Tool: opts.Tool}
	p.Emulated = sysfs.NewFS(c.root).Emulated()
	var u unix.Utsname
	if opts.Root == "/" && unix.Uname(&u) == nil {
		p.Host = unix.ByteSliceToString(u.Nodename[:])
		p.Kernel = unix.ByteSliceToString(u.Release[:]) + " " + unix.ByteSliceToString(u.Version[:])
		return p
	}
	read := func(rel string) string {
		b, err := os.ReadFile(c.path(rel))
		if err != nil {
			c.unreadable(rel, err)
		}
		return strings.TrimSpace(string(b))
	}
	p.Host = read("proc/sys/kernel/hostname")
	p.Kernel = strings.TrimSpace(read("proc/sys/kernel/osrelease") + " " + read("proc/sys/kernel/version"))
	return p
}

// Inputs returns the paths under root whose content d holds: an output
// must not be one of them (with --root, a fixture tree's files are
// ordinary files).
func Inputs(root string, d *emu.Description) []string {
	var in []string
	for _, f := range d.Files {
		if f.Mode != "" {
			in = append(in, path.Join(root, f.Path))
		}
	}
	return in
}
