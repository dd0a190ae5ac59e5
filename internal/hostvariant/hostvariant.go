// SPDX-License-Identifier: Apache-2.0

// Package hostvariant runs a test as it would run on each kind of host
// that CI lands on, whatever host it runs on. The CI machines differ from
// one run to the next (docs/testing.md, "Host kinds"): an Intel VM has
// CPUID faulting and a perf power PMU whose only event, energy-psys, reads
// 0 J; an AMD EPYC VM has neither. A test whose expectations depend on
// such a facility, written on one kind, used to pass there and fail on
// the other. Each re-runs such a test once per Variant, each time in a
// child test process whose view of the host is masked: a private mount
// namespace in which PMUs, their events and device or sysfs entries are
// hidden (their directory becomes a tmpfs that holds the other entries,
// bound from the real one) or replaced by stand-ins, and a seccomp filter
// that refuses arch_prctl(ARCH_SET_CPUID) with ENODEV as the kernel does
// on AMD. Every branch of a host-dependent test then runs on every host.
//
// A package that uses Each calls Setup first thing in its TestMain.
package hostvariant

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Environment variables between a test and its child.
const (
	// envMask names the variant whose mask Setup applies.
	envMask = "HWPPROBE_HOSTVARIANT_MASK"
	// envInside names the variant a child runs under, once masked.
	envInside = "HWPPROBE_HOSTVARIANT"
	// EnvLog names a file to which Each appends one line per variant
	// run ("PASS|FAIL variant package test"); make test prints it, so that
	// the CI log shows every variant that ran.
	EnvLog = "HWPPROBE_HOSTVARIANT_LOG"
)

// EnergyEvent is an event of a stand-in perf power PMU.
type EnergyEvent struct {
	// Name is the event's name: energy-pkg, energy-psys ...
	Name string
	// Counts: the event advances (it counts the software cpu-clock event
	// in units of 2^-32 J: about 0.23 W per package); else it reads 0,
	// as an Intel VM's energy-psys does (the software dummy event).
	Counts bool
}

// Mask is what a variant hides from, or puts in front of, the host.
type Mask struct {
	// Hide are paths made absent: their parent directory becomes a tmpfs
	// holding every other entry (directories and files bound from the
	// real ones, symbolic links copied). A trailing "*" in the last
	// element matches every entry that starts with what comes before it;
	// a "*" element matches every directory (as in /dev/cpu/*/msr).
	Hide []string
	// Power, where not nil, replaces the host's perf power PMU (if any)
	// by a stand-in with these events, on software events the kernel
	// counts on every host: type 1, cpumask 0, scale 2^-32, unit Joules.
	Power []EnergyEvent
	// NoCPUIDFaulting refuses arch_prctl(ARCH_SET_CPUID) with ENODEV,
	// as the kernel does where the CPU has no CPUID faulting (AMD).
	NoCPUIDFaulting bool
}

// Variant is one kind of host.
type Variant struct {
	// Name names the variant in subtest names and logs.
	Name string
	// Doc says which host it stands for and what it offers.
	Doc string
	// Mask is empty for the host as it is.
	Mask Mask
}

// The paths variants hide.
const (
	pmuDir   = "/sys/bus/event_source/devices/"
	powerPMU = pmuDir + "power"
	msrPMU   = pmuDir + "msr"
)

// Variants are the host kinds every host-dependent test runs under. The
// host's own CPU vendor shows through every variant (CPUID and
// /proc/cpuinfo are not masked); the emulator's machines cover the
// vendors' registers.
var Variants = []Variant{
	{Name: "host", Doc: "this host as it is"},
	{Name: "intel-vm", Doc: "as on an Intel CI VM: perf power PMU with energy-psys only, reading 0 J; msr PMU as the host's; CPUID faulting as the host's",
		Mask: Mask{Power: []EnergyEvent{{Name: "energy-psys"}}}},
	{Name: "intel-rapl", Doc: "as on an Intel machine with counting RAPL: perf power PMU with energy-pkg, energy-cores, energy-psys advancing; CPUID faulting as the host's",
		Mask: Mask{Power: []EnergyEvent{{Name: "energy-pkg", Counts: true}, {Name: "energy-cores", Counts: true}, {Name: "energy-psys", Counts: true}}}},
	{Name: "amd-epyc", Doc: "as on an AMD EPYC CI VM: no perf power PMU, no powercap, no CPUID faulting",
		Mask: Mask{Hide: []string{powerPMU, "/sys/class/powercap"}, NoCPUIDFaulting: true}},
	{Name: "bare", Doc: "as on a bare VM: no perf power, msr or cpu PMU, no powercap, no msr device, no CPUID faulting",
		Mask: Mask{Hide: []string{powerPMU, msrPMU, pmuDir + "cpu", "/sys/class/powercap", "/dev/cpu/*/msr"}, NoCPUIDFaulting: true}},
}

// ByName returns the variant called name.
func ByName(name string) (Variant, bool) {
	for _, v := range Variants {
		if v.Name == name {
			return v, true
		}
	}
	return Variant{}, false
}

// Setup applies the mask a parent asked for, in the child it started in
// a new mount namespace; elsewhere it does nothing. A package whose tests
// use Each or Command calls it first thing in TestMain. On failure it
// prints the error and exits 3.
func Setup() {
	name := os.Getenv(envMask)
	if name == "" {
		return
	}
	v, ok := ByName(name)
	if !ok {
		fmt.Fprintf(os.Stderr, "hostvariant: unknown variant %q\n", name)
		os.Exit(3)
	}
	if err := v.Mask.apply(); err != nil {
		fmt.Fprintf(os.Stderr, "hostvariant %s: %v\n", name, err)
		os.Exit(3)
	}
	os.Unsetenv(envMask)
	os.Setenv(envInside, name)
}

// Main is the TestMain of a package that needs no set-up of its own:
// Setup, then the tests.
func Main(m *testing.M) {
	Setup()
	os.Exit(m.Run())
}

// Current returns the variant this test process runs under, and false
// outside Each's children.
func Current() (Variant, bool) {
	name := os.Getenv(envInside)
	if name == "" {
		return Variant{}, false
	}
	return ByName(name)
}

// Each runs f once per variant, as subtests named after them. Under the
// host variant f runs here; under the others, in a child test process
// (this test binary, running this test alone) masked as the variant says,
// whose output is this subtest's log. In that child, Each runs f once
// with its variant. Each must be the whole of the test (the child runs
// the test from its start), and its package's TestMain must call Setup.
func Each(t *testing.T, f func(t *testing.T, v Variant)) {
	t.Helper()
	if v, ok := Current(); ok {
		t.Logf("host variant %s: %s", v.Name, v.Doc)
		f(t, v)
		return
	}
	pattern := runPattern(t.Name())
	for _, v := range Variants {
		t.Run(v.Name, func(t *testing.T) {
			if v.Name == "host" {
				t.Logf("host variant %s: %s", v.Name, v.Doc)
				f(t, v)
				logRun(t, v)
				return
			}
			runChild(t, v, pattern)
			logRun(t, v)
		})
	}
}

// runPattern is the -test.run pattern that selects the test called name
// (and its subtests) alone.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// runChild runs this test binary's test that pattern selects, masked as v.
func runChild(t *testing.T, v Variant, pattern string) {
	t.Helper()
	ctx := t.Context()
	if dl, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-5*time.Second))
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run", pattern, "-test.count", "1", "-test.v")
	cmd.Env = append(os.Environ(), envMask+"="+v.Name)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Logf("host variant %s (%s) in a child test process:\n%s", v.Name, v.Doc, indent(out.String()))
	if err != nil {
		t.Errorf("host variant %s: %v", v.Name, err)
	}
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

var logMu sync.Mutex

// logRun appends the outcome of t under v to the file EnvLog names.
func logRun(t *testing.T, v Variant) {
	path := os.Getenv(EnvLog)
	if path == "" {
		return
	}
	res := "PASS"
	if t.Failed() {
		res = "FAIL"
	}
	logMu.Lock()
	defer logMu.Unlock()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Errorf("variant log: %v", err)
		return
	}
	defer f.Close()
	// One write: lines of parallel test binaries do not interleave.
	bin := strings.TrimSuffix(filepath.Base(os.Args[0]), ".test")
	if _, err := fmt.Fprintf(f, "%s %-10s %s %s\n", res, v.Name, bin, t.Name()); err != nil {
		t.Errorf("variant log: %v", err)
	}
}
