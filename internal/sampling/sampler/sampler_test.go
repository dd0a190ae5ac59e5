// SPDX-License-Identifier: Apache-2.0

package sampler

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hwpprobe/hwpprobe/internal/kernel/topology"
)

// seqReader replays fixed readings, one per Read.
type seqReader struct {
	setup *Setup
	steps []Raw
	n     int
}

func (r *seqReader) Setup() *Setup { return r.setup }

func (r *seqReader) Read(dst *Raw) error {
	s := r.steps[r.n%len(r.steps)]
	r.n++
	copy(dst.CPU, s.CPU)
	copy(dst.Pkg, s.Pkg)
	return nil
}

// fakeClock advances by one second per call.
func fakeClock() func() time.Time {
	t := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Second); return t }
}

// firstSample starts a Sampler on r with fakeClock and returns its first
// sample.
func firstSample(t *testing.T, r Reader) Sample {
	t.Helper()
	s, err := New(r, WithClock(fakeClock()))
	if err != nil {
		t.Fatal(err)
	}
	var smp Sample
	if err := s.Sample(&smp); err != nil {
		t.Fatal(err)
	}
	return smp
}

// approx compares floats to 1e-9 relative, for figures computed in
// floating point.
var approx = cmpopts.EquateApprox(1e-9, 0)

func hybridSetup() *Setup {
	u := 1.0 / 16384 // MSR_RAPL_POWER_UNIT 0xa0e03: ESU 14 -> 2^-14 J (61 µJ)
	return &Setup{
		CPUs:         []Topo{{CPU: 0, Package: 0, Core: 0, Type: topology.PCore}, {CPU: 1, Package: 0, Core: 8, Type: topology.ECore}},
		Packages:     []int{0},
		Counters:     SrcMSR,
		TSC:          SrcMSR,
		Instructions: SrcPerf,
		HWPRequest:   SrcMSR,
		EPB:          SrcMSR,
		CoreTmp:      SrcMSR,
		PkgTmp:       SrcMSR,
		LimitReasons: SrcMSR,
		Energy: [NumDomains]EnergyCounter{
			DomPkg:   {Src: SrcMSR, Unit: u, Modulus: 1 << 32},
			DomCores: {Src: SrcMSR, Unit: u, Modulus: 1 << 32},
		},
		TjMax:    []float64{100, 100},
		PkgTjMax: []float64{100},
	}
}

// TestSampleFormulas checks the figures against turbostat's formulas
// worked by hand (see Sampler.cpu for the formulas, turbostat.c
// format_counters()). Interval: 1 s (fake clock).
func TestSampleFormulas(t *testing.T) {
	steps := []Raw{
		{
			CPU: []RawCPU{
				{APERF: 1000, MPERF: 2000, TSC: 5000, Instructions: 0, Enabled: 0, Running: 0, HWPRequest: 0x80002b0c, EPB: 6, ThermStatus: 0x882a0000},
				{APERF: 0, MPERF: 0, TSC: 0, HWPRequest: 0x80002b0c, EPB: 6, ThermStatus: 0x88300000},
			},
			// Energy 0xFFFFF000: the 32-bit counter is about to wrap.
			Pkg: []RawPkg{{Energy: [NumDomains]uint64{DomPkg: 0xFFFFF000, DomCores: 1000}, ThermStatus: 0x88280000, LimitReasons: 0x0}},
		},
		{
			CPU: []RawCPU{
				// cpu0: ΔTSC 2e9, ΔMPERF 1e9, ΔAPERF 1.5e9, Δinstructions 3e9.
				{APERF: 1000 + 1.5e9, MPERF: 2000 + 1e9, TSC: 5000 + 2e9, Instructions: 3e9, Enabled: 1e9, Running: 1e9, HWPRequest: 0x80ff2b0c, EPB: 6, ThermStatus: 0x882a0000},
				// cpu1: ΔTSC 2e9, ΔMPERF 2e9, ΔAPERF 1e9, Δinstructions 0.5e9.
				{APERF: 1e9, MPERF: 2e9, TSC: 2e9, Instructions: 0.5e9, Enabled: 1e9, Running: 1e9, HWPRequest: 0x80002b0c, EPB: 6, ThermStatus: 0x88300000},
			},
			// Pkg wrapped: 0x1000 counts to the wrap + 0xC3000 after
			// = 0xC4000 = 802816 counts x 2^-14 J = 49 J in 1 s.
			// Cores: 20 x 16384 counts = 20 J.
			Pkg: []RawPkg{{Energy: [NumDomains]uint64{DomPkg: 0xC3000, DomCores: 1000 + 20*16384}, ThermStatus: 0x88280000, LimitReasons: 0x1}},
		},
	}
	got := firstSample(t, &seqReader{setup: hybridSetup(), steps: steps})
	m := func(v float64) Value { return Value{V: v, Src: SrcMSR} }
	p := func(v float64) Value { return Value{V: v, Src: SrcPerf} }
	want := Sample{
		Seq:      1,
		Time:     time.Date(2026, 1, 2, 3, 4, 7, 0, time.UTC),
		Interval: time.Second,
		CPUs: []CPU{
			{
				CPU: 0, Package: 0, Core: 0, Type: topology.PCore,
				// Avg_MHz = 1.5e9/1e6/1 = 1500; Busy% = 100*1e9/2e9 = 50;
				// Bzy_MHz = 2e9/1e6 * 1.5e9/1e9 / 1 = 3000; TSC_MHz = 2000;
				// IPC = 3e9/1.5e9 = 2.
				AvgMHz: m(1500), BusyPct: m(50), BzyMHz: m(3000), TSCMHz: m(2000), IPC: p(2),
				// CoreTmp = 100 - 0x2a (42) = 58.
				CoreTmp:    m(58),
				HWPRequest: Reg{Raw: 0x80ff2b0c, Src: SrcMSR, Changed: true, Prev: 0x80002b0c},
				EPB:        Reg{Raw: 6, Src: SrcMSR},
				Counts:     Counts{APERF: 1.5e9, MPERF: 1e9, TSC: 2e9, Instructions: 3e9},
			},
			{
				CPU: 1, Package: 0, Core: 8, Type: topology.ECore,
				// Avg 1000, Busy 100, Bzy 2000*1e9/2e9 = 1000, IPC 0.5/1 = 0.5.
				AvgMHz: m(1000), BusyPct: m(100), BzyMHz: m(1000), TSCMHz: m(2000), IPC: p(0.5),
				CoreTmp:    m(100 - 0x30),
				HWPRequest: Reg{Raw: 0x80002b0c, Src: SrcMSR},
				EPB:        Reg{Raw: 6, Src: SrcMSR},
				Counts:     Counts{APERF: 1e9, MPERF: 2e9, TSC: 2e9, Instructions: 0.5e9},
			},
		},
		Packages: []Package{{
			Package: 0,
			PkgWatt: Value{V: 49, Src: SrcMSR, Flags: FlagWrapped},
			CorWatt: m(20),
			// PkgTmp = 100 - 0x28 (40) = 60.
			PkgTmp:       m(60),
			ThermStatus:  Reg{Raw: 0x88280000, Src: SrcMSR},
			LimitReasons: Reg{Raw: 1, Src: SrcMSR, Changed: true},
		}},
		Summaries: []Summary{
			{Type: topology.PCore, CPUs: 1, AvgMHz: m(1500), BusyPct: m(50), BzyMHz: m(3000), TSCMHz: m(2000), IPC: p(2), CoreTmp: m(58)},
			{Type: topology.ECore, CPUs: 1, AvgMHz: m(1000), BusyPct: m(100), BzyMHz: m(1000), TSCMHz: m(2000), IPC: p(0.5), CoreTmp: m(52)},
			// Machine: Avg = 2.5e9/2/1e6 = 1250; Busy = 100*3e9/4e9 = 75;
			// Bzy = (4e9/2)/1e6 * 2.5e9/3e9 = 1666.67; TSC = 2000;
			// IPC = 3.5e9/2.5e9 = 1.4; CoreTmp max(58, 52).
			{Type: topology.All, CPUs: 2, AvgMHz: m(1250), BusyPct: m(75), BzyMHz: m(2000 * 2.5 / 3), TSCMHz: m(2000), IPC: p(1.4), CoreTmp: m(58),
				PkgWatt: Value{V: 49, Src: SrcMSR, Flags: FlagWrapped}, CorWatt: m(20), PkgTmp: m(60)},
		},
	}
	if d := cmp.Diff(want, got, approx); d != "" {
		t.Errorf("Sample (-want +got):\n%s", d)
	}
}

// TestSampleMultiplexed: a perf group that ran half of the interval has
// its counts scaled by ΔEnabled/ΔRunning = 2 (perf stat's scaling);
// ratios do not change; one that never ran gives no figures.
func TestSampleMultiplexed(t *testing.T) {
	setup := &Setup{
		CPUs:     []Topo{{CPU: 0}, {CPU: 1}},
		Counters: SrcPerf, TSC: SrcPerf, Instructions: SrcPerf,
	}
	steps := []Raw{
		{CPU: []RawCPU{{}, {}}},
		{CPU: []RawCPU{
			{APERF: 0.5e9, MPERF: 0.25e9, TSC: 1e9, Instructions: 1e9, Enabled: 1e9, Running: 0.5e9},
			{APERF: 7, MPERF: 7, TSC: 7, Enabled: 1e9, Running: 0},
		}},
	}
	got := firstSample(t, &seqReader{setup: setup, steps: steps})
	mx := func(v float64) Value { return Value{V: v, Src: SrcPerf, Flags: FlagMultiplexed} }
	want := []CPU{
		// Scaled: APERF 1e9, MPERF 0.5e9, TSC 2e9, instructions 2e9.
		{CPU: 0, AvgMHz: mx(1000), BusyPct: mx(25), BzyMHz: mx(4000), TSCMHz: mx(2000), IPC: mx(2),
			Counts: Counts{APERF: 1e9, MPERF: 0.5e9, TSC: 2e9, Instructions: 2e9}},
		{CPU: 1},
	}
	if d := cmp.Diff(want, got.CPUs, approx); d != "" {
		t.Errorf("CPUs (-want +got):\n%s", d)
	}
	if all := got.Summary(topology.All); !all.AvgMHz.OK() || all.AvgMHz.Flags&FlagMultiplexed == 0 {
		t.Errorf("summary Avg_MHz %+v, want present and multiplexed", all.AvgMHz)
	}
}

// TestSampleTSCOnly is these VMs' case: the perf msr PMU has tsc but no
// aperf/mperf, and there is no msr device: only TSC_MHz, and energy from a
// power PMU counter that does not advance reads zero.
func TestSampleTSCOnly(t *testing.T) {
	setup := &Setup{
		CPUs: []Topo{{CPU: 0}}, Packages: []int{0},
		TSC:    SrcPerf,
		Energy: [NumDomains]EnergyCounter{DomPsys: {Src: SrcPerf, Unit: 2.3283064365386962890625e-10}},
	}
	steps := []Raw{
		{CPU: []RawCPU{{}}, Pkg: []RawPkg{{}}},
		{CPU: []RawCPU{{TSC: 2.1e9, Enabled: 1e9, Running: 1e9}}, Pkg: []RawPkg{{}}},
	}
	got := firstSample(t, &seqReader{setup: setup, steps: steps})
	wantCPU := CPU{TSCMHz: Value{V: 2100, Src: SrcPerf}, Counts: Counts{TSC: 2.1e9}}
	if d := cmp.Diff(wantCPU, got.CPUs[0], approx); d != "" {
		t.Errorf("CPU (-want +got):\n%s", d)
	}
	zero := Value{Src: SrcPerf, Flags: FlagReadsZero}
	if got.Packages[0].SysWatt != zero || got.Packages[0].SysWatt.OK() {
		t.Errorf("SysWatt = %+v, want reads-zero %+v", got.Packages[0].SysWatt, zero)
	}
	all := got.Summary(topology.All)
	if all.TSCMHz.V != 2100 || all.AvgMHz.Src != SrcNone || all.SysWatt != zero {
		t.Errorf("summary = %+v", all)
	}
}

func TestSampleBadReads(t *testing.T) {
	setup := hybridSetup()
	steps := []Raw{
		{CPU: []RawCPU{{}, {}}, Pkg: []RawPkg{{}}},
		{CPU: []RawCPU{{APERF: 1, MPERF: 1, TSC: 1, Bad: BadCounters | BadHWP | BadEPB | BadTherm}, {APERF: 1, MPERF: 1, TSC: 1}},
			Pkg: []RawPkg{{Bad: BadEnergy | BadTherm | BadLimit}}},
	}
	got := firstSample(t, &seqReader{setup: setup, steps: steps})
	c := got.CPUs[0]
	for name, v := range map[string]bool{"Avg": c.AvgMHz.OK(), "Busy": c.BusyPct.OK(), "Bzy": c.BzyMHz.OK(), "TSC": c.TSCMHz.OK(), "Tmp": c.CoreTmp.OK(), "HWP": c.HWPRequest.OK(), "EPB": c.EPB.OK()} {
		if v {
			t.Errorf("cpu0 %s present after a failed read", name)
		}
	}
	if !got.CPUs[1].AvgMHz.OK() {
		t.Errorf("cpu1 Avg_MHz absent although its reads succeeded")
	}
	pk := got.Packages[0]
	if pk.PkgWatt.OK() || pk.PkgTmp.OK() || pk.LimitReasons.OK() {
		t.Errorf("package figures present after failed reads: %+v", pk)
	}
}

func TestSampleAllocs(t *testing.T) {
	r := &seqReader{setup: hybridSetup(), steps: []Raw{
		{CPU: []RawCPU{{}, {}}, Pkg: []RawPkg{{}}},
		{CPU: []RawCPU{{APERF: 5, MPERF: 5, TSC: 9}, {APERF: 5, MPERF: 5, TSC: 9}}, Pkg: []RawPkg{{Energy: [NumDomains]uint64{5, 5}}}},
	}}
	s, err := New(r, WithClock(fakeClock()))
	if err != nil {
		t.Fatal(err)
	}
	var dst Sample
	if err := s.Sample(&dst); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() {
		if err := s.Sample(&dst); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Sample allocates %v times per call, want 0", n)
	}
}

func TestSampleJSONRoundTrip(t *testing.T) {
	r := &seqReader{setup: hybridSetup(), steps: []Raw{
		{CPU: []RawCPU{{}, {}}, Pkg: []RawPkg{{Energy: [NumDomains]uint64{0xfffffff0, 0}}}},
		{CPU: []RawCPU{{APERF: 5, MPERF: 5, TSC: 9, HWPRequest: 1}, {APERF: 5, MPERF: 5, TSC: 9}}, Pkg: []RawPkg{{Energy: [NumDomains]uint64{5, 0}}}},
	}}
	in := firstSample(t, r)
	var out Sample
	b, err := json.Marshal(&in)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(in, out); d != "" {
		t.Errorf("JSON round trip (-in +out):\n%s\n%s", d, b)
	}
	var info Info
	b, _ = json.Marshal(r.setup.Info())
	if err := json.Unmarshal(b, &info); err != nil {
		t.Fatal(err)
	}
	if info.Sources["PkgWatt"] != SrcMSR || info.Sources["Avg_MHz"] != SrcMSR || info.Sources["GFXWatt"] != SrcNone {
		t.Errorf("Info sources after round trip: %v", info.Sources)
	}
}

func TestValueJSON(t *testing.T) {
	tests := []struct {
		v    Value
		want string
	}{
		{Value{}, "null"},
		{Value{V: 1.5, Src: SrcPerf}, `{"v":1.5,"src":"perf"}`},
		{Value{V: 0, Src: SrcPowercap, Flags: FlagReadsZero | FlagWrapped}, `{"v":0,"src":"powercap","flags":["reads_zero","wrapped"]}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.v)
		if err != nil || string(b) != tt.want {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tt.v, b, err, tt.want)
		}
	}
	var v Value
	for _, bad := range []string{`{"v":1,"src":"nowhere"}`, `{"v":1,"src":"msr","flags":["odd"]}`} {
		if err := json.Unmarshal([]byte(bad), &v); err == nil {
			t.Errorf("Unmarshal(%s) succeeded", bad)
		}
	}
}

func TestNewNoCPUs(t *testing.T) {
	if _, err := New(&seqReader{setup: &Setup{}}); err != ErrNoCPUs {
		t.Errorf("New without CPUs: %v", err)
	}
}

// TestSampleCountersTime: when the Reader times the CPUs' counter reads,
// the interval runs between the mean of those times, not between the
// clock readings after each whole reading: the counters were read 0.5 s
// apart (the first at the baseline's clock, the second 0.5 s before the
// sample's clock), in which each TSC counted 0.85e9 at 1700 MHz.
func TestSampleCountersTime(t *testing.T) {
	setup := &Setup{CPUs: []Topo{{CPU: 0}, {CPU: 1}}, Packages: []int{0}, Counters: SrcMSR, TSC: SrcMSR}
	t0 := time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC) // fakeClock's first reading
	steps := []Raw{
		{CPU: []RawCPU{{Time: t0.Add(-time.Millisecond)}, {Time: t0.Add(time.Millisecond)}}, Pkg: []RawPkg{{}}},
		{CPU: []RawCPU{{APERF: 1e9, MPERF: 0.85e9, TSC: 0.85e9, Time: t0.Add(499 * time.Millisecond)},
			{APERF: 0.5e9, MPERF: 0.85e9, TSC: 0.85e9, Time: t0.Add(501 * time.Millisecond)}}, Pkg: []RawPkg{{}}},
	}
	got := firstSample(t, &seqReader{setup: setup, steps: steps})
	type figs struct{ Avg, TSC, Bzy float64 }
	want := []figs{{2000, 1700, 2000}, {1000, 1700, 1000}, {1500, 1700, 1500}}
	all := got.Summary(topology.All)
	gotF := []figs{
		{got.CPUs[0].AvgMHz.V, got.CPUs[0].TSCMHz.V, got.CPUs[0].BzyMHz.V},
		{got.CPUs[1].AvgMHz.V, got.CPUs[1].TSCMHz.V, got.CPUs[1].BzyMHz.V},
		{all.AvgMHz.V, all.TSCMHz.V, all.BzyMHz.V},
	}
	if d := cmp.Diff(want, gotF, approx); d != "" {
		t.Errorf("cpu0, cpu1, all (-want +got):\n%s", d)
	}
	if got.Interval != 500*time.Millisecond || !got.Time.Equal(t0.Add(500*time.Millisecond)) {
		t.Errorf("interval %v ending %v, want 500ms ending %v", got.Interval, got.Time, t0.Add(500*time.Millisecond))
	}
}
