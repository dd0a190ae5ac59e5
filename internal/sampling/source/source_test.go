// SPDX-License-Identifier: Apache-2.0

package source

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/hostvariant"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpuid"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
	"github.com/hwpprobe/hwpprobe/internal/kernel/topology"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
	"github.com/hwpprobe/hwpprobe/msr"
	"github.com/hwpprobe/hwpprobe/rapl"
)

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// clock is a fake clock advanced by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// intelRegs returns the registers of an Intel CPU with HWP: values from
// regs/testdata/registers.tsv style dumps (HWP_REQUEST 0x80002b0c:
// min 12, max 43, EPP 128; MSR_TEMPERATURE_TARGET 0x00640000: TjMax 100;
// MSR_RAPL_POWER_UNIT 0xa0e03: 2^-14 J; MSR_PKG_POWER_LIMIT as the
// emulated Core Ultra 7 165U's snapshot reads it, PL1 15 W, PL2 57 W).
func intelRegs() map[uint32]uint64 {
	return map[uint32]uint64{
		hwp.MSR_IA32_APERF: 0, hwp.MSR_IA32_MPERF: 0, msrTSC: 0,
		hwp.MSR_IA32_HWP_REQUEST: 0x80002b0c, hwp.MSR_IA32_ENERGY_PERF_BIAS: 6,
		hwp.MSR_IA32_THERM_STATUS: 0x88300000, hwp.MSR_TEMPERATURE_TARGET: 0x00640000,
		hwp.MSR_IA32_PACKAGE_THERM_STATUS: 0x88280000, hwp.MSR_CORE_PERF_LIMIT_REASONS: 0,
		rapl.MSR_RAPL_POWER_UNIT: 0xa0e03, rapl.MSR_PKG_ENERGY_STATUS: 0xfffff000, rapl.MSR_PP0_ENERGY_STATUS: 0,
		rapl.MSR_PKG_POWER_LIMIT: 0x4281c800dd8078,
	}
}

// TestMSRSources: no perf (as under emulation), counters and energy from
// the MSRs; the 32-bit package energy counter wraps between the samples.
func TestMSRSources(t *testing.T) {
	m := msr.Map{0: intelRegs(), 1: intelRegs()}
	root := t.TempDir() // no powercap: falls back to the MSRs
	clk := &clock{time.Unix(1000, 0)}
	set, err := Open(Config{Root: root, CPUs: []sampler.Topo{{CPU: 0}, {CPU: 1, Core: 1}}, MSR: m, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	st := set.Setup()
	got := map[string]sampler.Source{}
	for k, v := range st.Info().Sources {
		got[k] = v
	}
	want := map[string]sampler.Source{
		"Avg_MHz": sampler.SrcMSR, "Busy%": sampler.SrcMSR, "Bzy_MHz": sampler.SrcMSR, "TSC_MHz": sampler.SrcMSR,
		"IPC": sampler.SrcNone, "CoreTmp": sampler.SrcMSR, "PkgTmp": sampler.SrcMSR,
		"HWP_REQUEST": sampler.SrcMSR, "EPB": sampler.SrcMSR, "LIMIT_REASONS": sampler.SrcMSR, "HWP_STATUS": sampler.SrcNone,
		"POWER_LIMIT": sampler.SrcMSR,
		"PkgWatt":     sampler.SrcMSR, "CorWatt": sampler.SrcMSR, "GFXWatt": sampler.SrcNone, "RAMWatt": sampler.SrcNone, "SysWatt": sampler.SrcNone,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("sources (-want +got):\n%s", d)
	}
	s, err := sampler.New(set, sampler.WithClock(clk.now))
	if err != nil {
		t.Fatal(err)
	}
	// One second: cpu0 busy 25% at 3000 MHz with a 2000 MHz TSC;
	// EPB changes to 0 on cpu1. Package: 0x1000 counts to the wrap and
	// 20 J (327680 counts) after it: 20.25 J.
	clk.t = clk.t.Add(time.Second)
	m[0][msrTSC], m[0][hwp.MSR_IA32_MPERF], m[0][hwp.MSR_IA32_APERF] = 2e9, 0.5e9, 0.75e9
	m[1][msrTSC], m[1][hwp.MSR_IA32_MPERF], m[1][hwp.MSR_IA32_APERF] = 2e9, 2e9, 2e9
	m[1][hwp.MSR_IA32_ENERGY_PERF_BIAS] = 0
	m[0][rapl.MSR_PKG_ENERGY_STATUS] = 20 * 16384
	m[0][rapl.MSR_PP0_ENERGY_STATUS] = 10 * 16384
	var smp sampler.Sample
	if err := s.Sample(&smp); err != nil {
		t.Fatal(err)
	}
	c0, c1, pk := smp.CPUs[0], smp.CPUs[1], smp.Packages[0]
	approx := cmpopts.EquateApprox(1e-9, 0)
	type figs struct{ Avg, Busy, Bzy, TSC, Tmp, PkgW, CorW, PkgTmp float64 }
	gotF := figs{c0.AvgMHz.V, c0.BusyPct.V, c0.BzyMHz.V, c0.TSCMHz.V, c0.CoreTmp.V, pk.PkgWatt.V, pk.CorWatt.V, pk.PkgTmp.V}
	// Avg = 0.75e9/1e6 = 750; Busy = 25; Bzy = 2000*0.75/0.5 = 3000;
	// CoreTmp = 100 - 0x30 = 52; PkgTmp = 100 - 0x28 = 60.
	wantF := figs{750, 25, 3000, 2000, 52, 20.25, 10, 60}
	if d := cmp.Diff(wantF, gotF, approx); d != "" {
		t.Errorf("figures (-want +got):\n%s", d)
	}
	if pk.PkgWatt.Flags&sampler.FlagWrapped == 0 {
		t.Errorf("PkgWatt flags %v, want wrapped", pk.PkgWatt.Flags)
	}
	if pk.PowerLimit.Raw != 0x4281c800dd8078 || !pk.PowerLimit.OK() {
		t.Errorf("MSR_PKG_POWER_LIMIT %+v, want 0x4281c800dd8078", pk.PowerLimit)
	}
	if !c1.EPB.Changed || c0.EPB.Changed || c1.EPB.Raw != 0 {
		t.Errorf("EPB change: cpu0 %+v cpu1 %+v", c0.EPB, c1.EPB)
	}
	// HWP_REQUEST, EPB, THERM per CPU (3) + APERF, MPERF, TSC (3);
	// package: PKG and PP0 energy, PKG_THERM, LIMIT_REASONS, POWER_LIMIT
	// (5).
	before := set.Syscalls()
	if err := s.Sample(&smp); err == nil {
		t.Fatal("zero-length interval accepted")
	}
	if n := set.Syscalls() - before; n != 2*6+5 {
		t.Errorf("one reading made %d reads, want %d", n, 2*6+5)
	}
}

// TestNothingReadable: a machine without the msr driver, perf off and no
// powercap gives no figures and says why for each.
func TestNothingReadable(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"sys/devices/system/cpu/cpu0/topology/core_id": "0\n"})
	set, err := Open(Config{Root: root, CPUs: []sampler.Topo{{CPU: 0}}})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	st := set.Setup()
	if st.Counters != sampler.SrcNone || st.Energy[sampler.DomPkg].Src != sampler.SrcNone || st.HWPRequest != sampler.SrcNone {
		t.Errorf("sources present without any device: %+v", st)
	}
	notes := map[string]string{}
	for _, n := range st.Notes {
		notes[n.Figure] = n.Reason
	}
	for _, fig := range []string{"Avg_MHz", "PkgWatt", "HWP_REQUEST", "EPB", "CoreTmp", "PkgTmp", "LIMIT_REASONS"} {
		if notes[fig] == "" {
			t.Errorf("no note for %s; notes: %v", fig, st.Notes)
		}
	}
	if !strings.Contains(notes["HWP_REQUEST"], "msr") {
		t.Errorf("HWP_REQUEST note %q does not name the msr device", notes["HWP_REQUEST"])
	}
}

// TestPowercap reads energy from a powercap tree laid out as
// drivers/powercap/intel_rapl_common.c publishes it (package-0 with core
// and uncore sub-zones, psys as its own top-level zone), and handles the
// wrap at max_energy_range_uj.
func TestPowercap(t *testing.T) {
	root := t.TempDir()
	const pc = "sys/class/powercap/"
	const maxUJ = "262143328850\n" // 2^32 x 61.035 µJ, as on client parts
	writeTree(t, root, map[string]string{
		pc + "intel-rapl:0/name": "package-0\n", pc + "intel-rapl:0/max_energy_range_uj": maxUJ, pc + "intel-rapl:0/energy_uj": "262143000000\n",
		pc + "intel-rapl:0:0/name": "core\n", pc + "intel-rapl:0:0/max_energy_range_uj": maxUJ, pc + "intel-rapl:0:0/energy_uj": "5000000\n",
		pc + "intel-rapl:0:1/name": "uncore\n", pc + "intel-rapl:0:1/max_energy_range_uj": maxUJ, pc + "intel-rapl:0:1/energy_uj": "7\n",
		pc + "intel-rapl:1/name": "psys\n", pc + "intel-rapl:1/max_energy_range_uj": maxUJ, pc + "intel-rapl:1/energy_uj": "100\n",
	})
	clk := &clock{time.Unix(1000, 0)}
	set, err := Open(Config{Root: root, CPUs: []sampler.Topo{{CPU: 0}}, MSR: msr.Map{0: {}}, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	s, err := sampler.New(set, sampler.WithClock(clk.now))
	if err != nil {
		t.Fatal(err)
	}
	clk.t = clk.t.Add(2 * time.Second)
	writeTree(t, root, map[string]string{
		pc + "intel-rapl:0/energy_uj":   "1000000\n",  // wrapped: 328850 + 1000000 µJ
		pc + "intel-rapl:0:0/energy_uj": "15000000\n", // 10 J
		pc + "intel-rapl:0:1/energy_uj": "7\n",        // did not move
		pc + "intel-rapl:1/energy_uj":   "40000100\n", // 40 J
	})
	var smp sampler.Sample
	if err := s.Sample(&smp); err != nil {
		t.Fatal(err)
	}
	pk := smp.Packages[0]
	want := sampler.Package{
		PkgWatt: sampler.Value{V: 1.328850 / 2, Src: sampler.SrcPowercap, Flags: sampler.FlagWrapped},
		CorWatt: sampler.Value{V: 5, Src: sampler.SrcPowercap},
		GFXWatt: sampler.Value{V: 0, Src: sampler.SrcPowercap, Flags: sampler.FlagReadsZero},
		SysWatt: sampler.Value{V: 20, Src: sampler.SrcPowercap},
	}
	if d := cmp.Diff(want, pk, cmpopts.EquateApprox(1e-9, 0)); d != "" {
		t.Errorf("package (-want +got):\n%s", d)
	}
	// One pread per zone per reading, and no allocation.
	raw := sampler.NewRaw(set.Setup())
	before := set.Syscalls()
	if n := testing.AllocsPerRun(10, func() {
		if err := set.Read(&raw); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Set.Read allocates %v times, want 0", n)
	}
	if n := set.Syscalls() - before; n != 11*4 {
		t.Errorf("%d reads for 11 readings of 4 zones, want 44", n)
	}
}

func TestPlacement(t *testing.T) {
	in := topology.Topology{Hybrid: true, CPUs: []topology.CPU{
		{CPU: 0, Package: 0, Core: 0, Type: topology.PCore},
		{CPU: 1, Package: 0, Core: 8, Type: topology.ECore},
		{CPU: 2, Package: 1, Core: 32, Type: topology.LPECore},
		{CPU: 3, Package: 1, Core: 33, Type: topology.Uniform},
	}}
	want := []sampler.Topo{
		{CPU: 0, Package: 0, Core: 0, Type: topology.PCore},
		{CPU: 1, Package: 0, Core: 8, Type: topology.ECore},
		{CPU: 2, Package: 1, Core: 32, Type: topology.LPECore},
		{CPU: 3, Package: 1, Core: 33, Type: topology.Uniform},
	}
	if d := cmp.Diff(want, Placement(in)); d != "" {
		t.Errorf("Placement (-want +got):\n%s", d)
	}
}

// TestRealVM runs on the development/CI VM itself, under every host
// variant: the perf msr PMU has tsc only (or is hidden), there is no
// hardware PMU, no msr driver and no powercap. TSC_MHz comes from perf;
// energy from the power PMU where a variant has one; everything else is
// absent with a reason, one note of one line per figure.
func TestRealVM(t *testing.T) {
	hostvariant.Each(t, realVM)
}

func realVM(t *testing.T, v hostvariant.Variant) {
	online, err := sysfs.NewFS("/").OnlineCPUs()
	if err != nil {
		t.Fatal(err)
	}
	topo, err := topology.Detect(sysfs.NewFS("/"), cpuid.Open("/"), online)
	if err != nil {
		t.Fatal(err)
	}
	set, err := Open(Config{Root: "/", CPUs: Placement(topo), Perf: true})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	st := set.Setup()
	notes := map[string]string{}
	for _, n := range st.Notes {
		if _, dup := notes[n.Figure]; dup {
			t.Errorf("two notes for %s: %q and %q", n.Figure, notes[n.Figure], n.Reason)
		}
		if strings.Contains(n.Reason, "\n") {
			t.Errorf("note for %s of several lines: %q", n.Figure, n.Reason)
		}
		notes[n.Figure] += n.Reason
	}
	noMSRPMU := slices.Contains(v.Mask.Hide, "/sys/bus/event_source/devices/msr")
	wantTSC, wantNote := sampler.SrcPerf, "no aperf/mperf"
	if noMSRPMU {
		wantTSC, wantNote = sampler.SrcNone, "perf msr PMU (/sys/bus/event_source/devices/msr): PMU not present"
	}
	if st.TSC != wantTSC {
		t.Fatalf("TSC source %v, want %v; notes %v", st.TSC, wantTSC, st.Notes)
	}
	if st.Counters != sampler.SrcNone || !strings.Contains(notes["Avg_MHz"], wantNote) {
		t.Errorf("counters %v, Avg_MHz note %q, want it to say %q", st.Counters, notes["Avg_MHz"], wantNote)
	}
	// Energy: each event of a stand-in power PMU is a perf domain; with
	// no power PMU, no powercap and no msr device, none, with a note.
	if v.Mask.Power != nil {
		for _, e := range v.Mask.Power {
			d := slices.Index(perfDomains[:], e.Name)
			if st.Energy[d].Src != sampler.SrcPerf {
				t.Errorf("energy %s: source %v, want perf", e.Name, st.Energy[d].Src)
			}
		}
	} else if slices.Contains(v.Mask.Hide, "/sys/bus/event_source/devices/power") {
		for d, ec := range st.Energy {
			if ec.Src != sampler.SrcNone {
				t.Errorf("energy domain %d: source %v without any counter", d, ec.Src)
			}
		}
		if !strings.Contains(notes["PkgWatt"], "no energy counters") {
			t.Errorf("PkgWatt note %q, want it to say there are no energy counters", notes["PkgWatt"])
		}
	}
	if st.Instructions != sampler.SrcNone || !strings.Contains(notes["IPC"], "not supported") {
		t.Errorf("instructions %v, IPC note %q", st.Instructions, notes["IPC"])
	}
	s, err := sampler.New(set)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	var smp sampler.Sample
	if err := s.Sample(&smp); err != nil {
		t.Fatal(err)
	}
	for _, c := range smp.CPUs {
		if noMSRPMU {
			if c.TSCMHz.Src != sampler.SrcNone {
				t.Errorf("cpu%d TSC_MHz %+v without a TSC source", c.CPU, c.TSCMHz)
			}
		} else if mhz := c.TSCMHz.V; !c.TSCMHz.OK() || mhz < 1000 || mhz > 10000 {
			t.Errorf("cpu%d TSC_MHz %+v, want 1000-10000 from perf", c.CPU, c.TSCMHz)
		}
		if c.AvgMHz.Src != sampler.SrcNone || c.IPC.Src != sampler.SrcNone {
			t.Errorf("cpu%d: Avg_MHz %+v IPC %+v present without counters", c.CPU, c.AvgMHz, c.IPC)
		}
	}
}
