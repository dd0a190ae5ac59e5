// SPDX-License-Identifier: Apache-2.0

package hostvariant

import (
	"errors"
	"os"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hwpprobe/hwpprobe/perfcount"
)

func TestMain(m *testing.M) { Main(m) }

// TestMasks checks, under every variant, that the host looks as the
// variant says: the power PMU absent, or the stand-in with its events
// counting or reading 0; hidden entries gone and their siblings still
// there; ARCH_SET_CPUID refused where the variant refuses it.
func TestMasks(t *testing.T) {
	hostFault := faultingOutside(t)
	Each(t, func(t *testing.T, v Variant) {
		hidden := func(p string) bool { return slices.Contains(v.Mask.Hide, p) }
		// Entries beside the hidden ones stay.
		for _, p := range []string{pmuDir + "software", pmuDir + "tracepoint", "/dev/cpu/0/cpuid", "/sys/class/net"} {
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s: %v, want it kept", p, err)
			}
		}
		if hidden(msrPMU) {
			if _, err := perfcount.ProbePMU("/", "msr"); !errors.Is(err, perfcount.ErrNoPMU) {
				t.Errorf("msr PMU hidden, but ProbePMU: %v", err)
			}
		}
		if hidden("/dev/cpu/*/msr") {
			if _, err := os.Lstat("/dev/cpu/0/msr"); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("/dev/cpu/0/msr: %v, want it absent", err)
			}
		}
		p, err := perfcount.ProbePMU("/", "power")
		switch {
		case v.Mask.Power != nil:
			if err != nil {
				t.Fatalf("stand-in power PMU: %v", err)
			}
			checkPower(t, p, v.Mask.Power)
		case hidden(powerPMU):
			if !errors.Is(err, perfcount.ErrNoPMU) {
				t.Errorf("power PMU hidden, but ProbePMU: %v", err)
			}
		}
		_, _, e := unix.Syscall(unix.SYS_ARCH_PRCTL, ArchSetCPUID, 1, 0)
		faulting := e == 0
		if want := hostFault && !v.Mask.NoCPUIDFaulting; faulting != want {
			t.Errorf("ARCH_SET_CPUID: %v (faulting %v), want faulting %v", e, faulting, want)
		}
	})
}

// faultingOutside is whether this host grants CPUID faulting, asked
// outside any variant (in a child it is the parent's answer).
func faultingOutside(t *testing.T) bool {
	if _, inside := Current(); inside {
		return os.Getenv("HOSTVARIANT_TEST_FAULT") == "1"
	}
	_, _, e := unix.Syscall(unix.SYS_ARCH_PRCTL, ArchSetCPUID, 1, 0)
	fault := e == 0
	v := "0"
	if fault {
		v = "1"
	}
	t.Setenv("HOSTVARIANT_TEST_FAULT", v)
	t.Logf("this host grants CPUID faulting: %v", fault)
	return fault
}

// checkPower opens the stand-in power PMU's events on its cpumask CPU and
// checks their names, scale and unit, and that those that count advance
// and the others read 0.
func checkPower(t *testing.T, p *perfcount.PMU, want []EnergyEvent) {
	t.Helper()
	var names []string
	for _, e := range p.Events {
		names = append(names, e.Name)
		if e.Unit != "Joules" || e.Scale != 0x1p-32 {
			t.Errorf("%s: unit %q scale %g, want Joules, 2^-32", e, e.Unit, e.Scale)
		}
	}
	var wantNames []string
	for _, e := range want {
		wantNames = append(wantNames, e.Name)
	}
	slices.Sort(wantNames)
	if !slices.Equal(names, wantNames) {
		t.Fatalf("power PMU events %v, want %v", names, wantNames)
	}
	g, err := perfcount.OpenGroup(-1, p.CPUs[0], p.Events)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	r0, r1 := g.NewReading(), g.NewReading()
	if err := g.Read(&r0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if err := g.Read(&r1); err != nil {
		t.Fatal(err)
	}
	for _, e := range want {
		c := perfcount.Delta(&r0, &r1, g.Index(e.Name))
		if (c.Value > 0) != e.Counts {
			t.Errorf("%s counted %d in 20 ms, want counting %v", e.Name, c.Value, e.Counts)
		}
	}
}
