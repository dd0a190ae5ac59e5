// SPDX-License-Identifier: Apache-2.0

package emu

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// allCPUs returns the writes of the file cpuN/cpufreq/<file> = value for
// CPUs 0 to n-1, for each file, value pair in kv.
func allCPUs(n int, kv ...string) []SysfsWrite {
	var ws []SysfsWrite
	for i := 0; i+1 < len(kv); i += 2 {
		for c := range n {
			ws = append(ws, SysfsWrite{fmt.Sprintf("sys/devices/system/cpu/cpu%d/cpufreq/%s", c, kv[i]), kv[i+1]})
		}
	}
	return ws
}

// The three profiles of issue 23 on mtl-165u (14 CPUs), as hwpprobe names
// them.
var (
	profPerformance = PredictProfile{"performance", allCPUs(14, "scaling_governor", "performance")}
	profEPP0        = PredictProfile{"powersave:epp=0", allCPUs(14, "scaling_governor", "powersave", "energy_performance_preference", "0")}
	profEPP16       = PredictProfile{"powersave:epp=performance", allCPUs(14, "scaling_governor", "powersave", "energy_performance_preference", "performance")}
)

// TestHWPTargetPinned checks the request's bounds on the selection: a
// request with min = max gets that level whatever desired, EPP and load
// say (no autonomous selection), and no request leaves the capability
// range [lowest 1, highest 62] (mtl-165u's P-core).
func TestHWPTargetPinned(t *testing.T) {
	checkHWPTarget(t, []hwpTargetCase{
		{"pinned mid-range, EPP 255, idle", 30, 30, 0, 255, 0, 30},
		{"pinned, desired above", 30, 30, 50, 0, 1, 30},
		{"pinned above highest", 255, 255, 0, 0, 1, 62},
		{"min above highest", 70, 80, 0, 128, 1, 62},
		{"min above max", 40, 20, 0, 0, 1, 40},
		{"pinned at 0", 0, 0, 0, 0, 1, 1},
	})
}

// steady applies writes to mtl-165u, every CPU busy, with the model
// variant and time scale 28 (PL1's tau 1 s), and runs it 10 s: PL1 holds.
func steady(t *testing.T, variant string, writes []SysfsWrite) (*Machine, *fakeClock) {
	t.Helper()
	m, clk := load(t, "mtl-165u", 1, WithTimeScale(28), WithVariant(variant))
	for _, w := range writes {
		if err := writeTree(m.Tree(), w); err != nil {
			t.Fatal(err)
		}
	}
	clk.add(10 * time.Second)
	return m, clk
}

// TestMinFloorUnderLimit holds mtl-165u, every CPU busy, at PL1 with EPP
// 0 everywhere and the P-cores' scaling_min_freq at 2.4 GHz (HWP min 30,
// 2400 MHz). The request's minimum bounds the sharing rule: the P-cores
// stay at 2400 MHz, above the 2124 MHz the uniform rule alone would give
// them, and the E and LP-E cores share the rest of the 15 W. By hand
// (busy power = active_w x (f / guaranteed)^2, fixed 0.8 + 2.0 W):
// P 4 x (2400/1760)^2 = 7.438 W, so E and LP-E keep s = sqrt((12.2 -
// 7.438) / (8 x 0.4 x (3800/1200)^2 + 2 x 0.15 x (2100/700)^2)) =
// 0.36998 of their requests: 1405.9 and 776.9 MHz. No CPU runs below its
// minimum, so no IA32_HWP_STATUS excursion bit is set.
func TestMinFloorUnderLimit(t *testing.T) {
	writes := append(allCPUs(14, "energy_performance_preference", "0"), allCPUs(4, "scaling_min_freq", "2400000")...)
	m, clk := steady(t, VariantNone, writes)
	var got [3]float64
	for i, n := range []int{0, 4, 12} {
		got[i] = delivered(t, m, clk, n, time.Second)
	}
	want := [3]float64{2400, 1405.909, 776.950}
	if d := cmp.Diff(want, got, cmpopts.EquateApprox(0, 0.01)); d != "" {
		t.Errorf("delivered MHz P, E, LP-E (-want +got):\n%s", d)
	}
	if w := pkgWatts(m, clk, time.Second); math.Abs(w-15) > 1e-6 {
		t.Errorf("package %.6f W, want PL1 15", w)
	}
	for n := range m.NumCPUs() {
		if s := msr(t, m, n, 0x777); s&hwpStatusExcursion != 0 {
			t.Errorf("cpu%d HWP_STATUS %#x: excursion to minimum, want none", n, s)
		}
	}
}

// TestCPUWatts works cpuDemand.watts by hand (coef 1e-6, exponent 2, busy
// 0.5): b x coef x f^2 in the base model; under min-pins, below the
// pinned 4000 MHz, b x coef x 4000 x f (the pinned level's cost per
// cycle), and above or at it the same as the base.
func TestCPUWatts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pinMHz float64
		f      float64
		want   float64
	}{
		{"base", 0, 2000, 0.5 * 1e-6 * 2000 * 2000},
		{"pinned, at the pin", 4000, 4000, 0.5 * 1e-6 * 4000 * 4000},
		{"pinned, gated to half", 4000, 2000, 0.5 * 1e-6 * 4000 * 2000},
	} {
		d := cpuDemand{b: 0.5, coef: 1e-6, pinMHz: tc.pinMHz}
		if got := d.watts(tc.f, 2); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: watts(%g) = %g, want %g", tc.name, tc.f, got, tc.want)
		}
	}
}

// TestEPPVoltage checks the epp-voltage factor: 1.25 at EPP 0, linear to
// 1 at EPP 16, 1 above.
func TestEPPVoltage(t *testing.T) {
	for _, tc := range []struct {
		epp  uint8
		want float64
	}{{0, 1.25}, {4, 1.1875}, {8, 1.125}, {16, 1}, {64, 1}, {255, 1}} {
		if got := eppVoltage(tc.epp); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("eppVoltage(%d) = %g, want %g", tc.epp, got, tc.want)
		}
	}
}

// TestVariantErrors loads machines with bad variants: an unknown name
// lists the variants; a variant on a machine it has nothing to act on
// says what the machine lacks. Each is one line wrapping ErrVariant.
func TestVariantErrors(t *testing.T) {
	for _, tc := range []struct {
		machine, variant string
		want             string // "" for no error
		scale            float64
	}{
		{"mtl-165u", "", "", 1},
		{"mtl-165u", "platform-pl1", "", 1},
		{"spr-2s", "min-pins", "", 1},
		{"zen4-amd-pstate", "none", "", 1},
		{"vm-bare", "none", "", 1},
		{"mtl-165u", "fast", `unknown model variant "fast" (variants: none, min-pins, epp-voltage, platform-pl1, broken-max)`, 1},
		{"mtl-165u", "None", `unknown model variant "None" (variants: none, min-pins, epp-voltage, platform-pl1, broken-max)`, 1},
		{"zen4-amd-pstate", "min-pins", "model variant min-pins does not apply to zen4-amd-pstate: it has no package power limit (no pkg_power_limit register), and min-pins changes only how a package power limit is met", 1},
		{"zen4-amd-pstate", "platform-pl1", "model variant platform-pl1 does not apply to zen4-amd-pstate: it has no package power limit", 1},
		{"vm-bare", "epp-voltage", "model variant epp-voltage does not apply to vm-bare: it has no HWP or CPPC requests", 1},
		{"mtl-165u", "platform-pl1", "", 1000},
		{"mtl-165u", "platform-pl1", "model variant platform-pl1 polls every 1 s divided by the time scale: at most time scale 1000, not 1001", 1001},
		{"mtl-165u", "min-pins", "", 1e6},
	} {
		t.Run(fmt.Sprintf("%s/%s/%g", tc.machine, tc.variant, tc.scale), func(t *testing.T) {
			m, err := Load(tc.machine, WithLoad(ConstLoad{0}), WithVariant(tc.variant), WithTimeScale(tc.scale))
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				want := tc.variant
				if want == "" {
					want = VariantNone
				}
				if got := read(t, m, VariantPath); got != want || m.Variant() != want {
					t.Errorf("%s reads %q, Variant() %q, want %q", VariantPath, got, m.Variant(), want)
				}
				return
			}
			if !errors.Is(err, ErrVariant) || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v, want one line wrapping ErrVariant starting %q", err, tc.want)
			}
		})
	}
}

// TestPredictVariants checks Predict's steady state on mtl-165u, every CPU
// busy, under each variant for the profiles of issue 23, against values
// worked by hand (core budget 15 - 2.8 = 12.2 W; full demand at EPP 0
// 66.559 W: P 4 x (4960/1760)^2, E 8 x 0.4 x (3800/1200)^2, LP-E 2 x 0.15
// x (2100/700)^2):
//   - none: performance and powersave:epp=0 both keep s = sqrt(12.2 /
//     66.559) = 0.42814 of the requests: 2123.6 / 1626.9 / 899.1 MHz;
//   - min-pins: performance pins min = max, so its CPUs gate cycles at the
//     pinned cost: 12.2 / 66.559 = 0.18330 of the requests, 909.2 / 696.5
//     / 384.9 MHz; powersave:epp=0 is the base model's: 2.336x the work;
//   - epp-voltage: EPP 0 costs 1.25x: s = sqrt(12.2 / (1.25 x 66.559)) =
//     0.38294, 1899.4 / 1455.2 / 804.2 MHz under both EPP 0 profiles;
//     powersave:epp=performance (EPP 16, factor 1) is the base model's
//     2070.4 / 1656.5 / 961.9 MHz (TestEPPBudget's rule);
//   - platform-pl1: the package stays above 70 C at 15 W (72.5 C), so
//     PL1 becomes 10 W: s = sqrt(7.2 / 66.559), 1631.4 / 1249.8 / 690.7
//     MHz, and the package settles at 35 + 2.5 x 10 = 60 C.
func TestPredictVariants(t *testing.T) {
	types := func(p, e, lpe float64) []TypeMHz {
		return []TypeMHz{{"P", 4, p}, {"E", 8, e}, {"LPE", 2, lpe}}
	}
	work := func(ts []TypeMHz) float64 { return 4*ts[0].MHz + 8*ts[1].MHz + 2*ts[2].MHz }
	pred := func(name string, ts []TypeMHz, w, pl1, temp float64) Prediction {
		return Prediction{Profile: name, Types: ts, PkgWatts: w, PL1Watts: pl1, TempC: temp, WorkMHz: work(ts),
			Settle: 600 * time.Second, Window: time.Minute}
	}
	uniform := types(2123.553, 1626.916, 899.085)
	epp16 := types(2070.416, 1656.545, 961.916)
	for _, tc := range []struct {
		variant string
		want    []Prediction
	}{
		{VariantNone, []Prediction{
			pred("performance", uniform, 15, 15, 72.5),
			pred("powersave:epp=0", uniform, 15, 15, 72.5),
			pred("powersave:epp=performance", epp16, 15, 15, 72.5)}},
		{VariantMinPins, []Prediction{
			pred("performance", types(909.169, 696.541, 384.930), 15, 15, 72.5),
			pred("powersave:epp=0", uniform, 15, 15, 72.5),
			pred("powersave:epp=performance", epp16, 15, 15, 72.5)}},
		{VariantEPPVoltage, []Prediction{
			pred("performance", types(1899.364, 1455.158, 804.166), 15, 15, 72.5),
			pred("powersave:epp=0", types(1899.364, 1455.158, 804.166), 15, 15, 72.5),
			pred("powersave:epp=performance", epp16, 15, 15, 72.5)}},
		{VariantPlatformPL1, []Prediction{
			pred("performance", types(1631.359, 1249.831, 690.696), 10, 10, 60),
			pred("powersave:epp=0", types(1631.359, 1249.831, 690.696), 10, 10, 60),
			pred("powersave:epp=performance", types(1589.650, 1271.882, 747.388), 10, 10, 60)}},
	} {
		t.Run(tc.variant, func(t *testing.T) {
			got, err := Predict("mtl-165u", PredictOptions{Variant: tc.variant}, []PredictProfile{profPerformance, profEPP0, profEPP16})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 0.01)); d != "" {
				t.Errorf("predictions (-want +got):\n%s", d)
			}
		})
	}
}

// TestPredictErrors checks Predict's refusals: a busy count the machine
// does not have, a write the kernel's rules refuse (EPP 16 under the
// performance governor: EBUSY), a file the machine lacks, a variant that
// does not apply.
func TestPredictErrors(t *testing.T) {
	bad := PredictProfile{"bad", []SysfsWrite{
		{"sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance"},
		{"sys/devices/system/cpu/cpu0/cpufreq/energy_performance_preference", "performance"}}}
	missing := PredictProfile{"missing", []SysfsWrite{{"sys/devices/system/cpu/cpu99/cpufreq/scaling_governor", "performance"}}}
	for _, tc := range []struct {
		name, machine string
		o             PredictOptions
		p             PredictProfile
		is            error
		want          string
	}{
		{"busy above online", "mtl-165u", PredictOptions{Busy: 15}, profPerformance, ErrPredict, "predict: 15 busy CPUs: mtl-165u has 14 online (1 to 14, or 0 for all)"},
		{"busy negative", "mtl-165u", PredictOptions{Busy: -1}, profPerformance, ErrPredict, "predict: -1 busy CPUs"},
		{"refused write", "mtl-165u", PredictOptions{}, bad, ErrPredict, "predict: profile bad: write sys/devices/system/cpu/cpu0/cpufreq/energy_performance_preference: device or resource busy"},
		{"missing file", "mtl-165u", PredictOptions{}, missing, ErrPredict, "predict: profile missing: write sys/devices/system/cpu/cpu99/cpufreq/scaling_governor: file does not exist"},
		{"variant", "zen4-amd-pstate", PredictOptions{Variant: VariantMinPins}, PredictProfile{Name: "current"}, ErrVariant, "model variant min-pins does not apply"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Predict(tc.machine, tc.o, []PredictProfile{tc.p})
			if !errors.Is(err, tc.is) || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %v, want one wrapping %v starting %q", err, tc.is, tc.want)
			}
		})
	}
}

// TestPredictBusySubset predicts mtl-165u with only the four P-core
// threads busy under performance: the package is 0.8 + 2.0 x 4/14 W
// fixed and 4 x (4960/1760)^2 = 31.77 W of P-cores, above PL1, so they
// keep sqrt((15 - 1.3714) / 31.77) = 0.65500 of 4960 MHz = 3248.8 MHz;
// no other type is reported.
func TestPredictBusySubset(t *testing.T) {
	got, err := Predict("mtl-165u", PredictOptions{Busy: 4}, []PredictProfile{profPerformance})
	if err != nil {
		t.Fatal(err)
	}
	s := math.Sqrt((15 - 0.8 - 2.0*4/14) / (4 * math.Pow(4960.0/1760, 2)))
	want := []Prediction{{Profile: "performance", Types: []TypeMHz{{"P", 4, 4960 * s}}, PkgWatts: 15, PL1Watts: 15,
		TempC: 72.5, WorkMHz: 4 * 4960 * s, Settle: 600 * time.Second, Window: time.Minute}}
	if d := cmp.Diff(want, got, cmpopts.EquateApprox(0, 0.01)); d != "" {
		t.Errorf("prediction (-want +got):\n%s", d)
	}
}

// TestPlatformPL1 runs mtl-165u, every CPU busy under performance, with
// the platform-pl1 controller. PL2 (57 W) heats the package past 70 C at
// 25 s x ln((57 - 0.8) / (57 - 14)) = 6.69 s (T = 35 + 2.5 E); PL1 then
// holds 15 W, whose 72.5 C keeps it above 70 C, so the controller's tenth
// poll in a row above, at 16 s, writes PL1 = 10 W through powercap: the
// write log shows MSR_PKG_POWER_LIMIT 0x004281c800dd8078 -> ...8050 (80
// units of 1/8 W) by the controller, and the package then draws 10 W.
// Idle, the package cools below 55 C and ten polls later PL1 is 15 W
// again. A machine read every 0.3 s makes the same writes at the same
// model times as one read only at the checks.
func TestPlatformPL1(t *testing.T) {
	type run struct {
		m    *Machine
		clk  *fakeClock
		busy ConstLoad
	}
	start := func() *run {
		r := &run{busy: ConstLoad{1}}
		r.m, r.clk = load(t, "mtl-165u", 1, WithLoad(&r.busy), WithVariant(VariantPlatformPL1))
		allPerformance(t, r.m)
		return r
	}
	often, once := start(), start()
	step := func(d time.Duration) {
		for end := often.clk.t.Add(d); often.clk.t.Before(end); {
			often.clk.add(min(300*time.Millisecond, end.Sub(often.clk.t)))
			msr(t, often.m, 0, 0x611)
		}
		once.clk.add(d)
		msr(t, once.m, 0, 0x611)
	}
	pl1 := func(m *Machine) string {
		return read(t, m, "sys/class/powercap/intel-rapl:0/constraint_0_power_limit_uw")
	}
	type logged struct {
		CPU      int
		MSR      uint32
		Old, New uint64
		Comm     string
	}
	writes := func(m *Machine) []logged {
		var out []logged
		for _, w := range m.MSRWrites() {
			if w.MSR == 0x610 {
				out = append(out, logged{w.CPU, w.MSR, w.Old, w.New, w.Comm})
			}
		}
		return out
	}
	lowered := logged{0, 0x610, 0x004281c800dd8078, 0x004281c800dd8050, platformComm}
	restored := logged{0, 0x610, 0x004281c800dd8050, 0x004281c800dd8078, platformComm}

	step(15900 * time.Millisecond)
	for _, r := range []*run{often, once} {
		if got := writes(r.m); len(got) != 0 || pl1(r.m) != "15000000" {
			t.Fatalf("at 15.9 s: PL1 %s µW, writes %+v; want 15 W and none yet", pl1(r.m), got)
		}
	}
	step(200 * time.Millisecond)
	for _, r := range []*run{often, once} {
		if d := cmp.Diff([]logged{lowered}, writes(r.m)); d != "" || pl1(r.m) != "10000000" {
			t.Fatalf("at 16.1 s: PL1 %s µW; writes (-want +got):\n%s", pl1(r.m), d)
		}
	}
	for _, r := range []*run{often, once} {
		if w := pkgWatts(r.m, r.clk, time.Second); math.Abs(w-10) > 1e-6 {
			t.Errorf("after the controller lowered PL1: %.6f W, want 10", w)
		}
		r.busy[0] = 0
	}
	step(200 * time.Second)
	for _, r := range []*run{often, once} {
		if d := cmp.Diff([]logged{lowered, restored}, writes(r.m)); d != "" || pl1(r.m) != "15000000" {
			t.Errorf("idle 200 s: PL1 %s µW; writes (-want +got):\n%s", pl1(r.m), d)
		}
	}
	if a, b := float64(msr(t, often.m, 0, 0x611)), float64(msr(t, once.m, 0, 0x611)); math.Abs(a-b) > 2 {
		t.Errorf("energy read every 0.3 s %.0f, read at the checks %.0f: want the same", a, b)
	}
}

// TestAMDMinFloorUnderLimit gives zen4-amd-pstate a package limit it
// lacks (PL1 100 W; the model enforces any pkg_power_limit register) and
// runs every CPU busy: CPUs 0-15 under performance (CPPC_REQ min =
// nominal 150 = 4500 MHz), 16-31 under powersave with EPP 0 (min = lowest
// nonlinear 60 = 1800 MHz), all requesting 5700 MHz. The uniform rule
// alone would give every CPU sqrt(63 / (32 x 2.5 x (5700/4500)^2)) of 5700
// = 3993 MHz (fixed 22 + 15 W); CPPC_REQ's minimum bounds it as
// HWP_REQUEST's does: CPUs 0-15 hold 4500 MHz (16 x 2.5 W = 40 W), the
// others share the remaining 23 W: 4500 x sqrt(23 / 40) = 3412.3 MHz.
func TestAMDMinFloorUnderLimit(t *testing.T) {
	y, err := builtin.ReadFile("machines/zen4-amd-pstate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d, err := ParseDescription(y)
	if err != nil {
		t.Fatal(err)
	}
	d.RAPL.LimitMSR = 0x610
	d.MSRs = append(d.MSRs, MSR{Addr: 0x610, Name: "PL1 100 W (test)", Kind: "pkg_power_limit", Value: 1<<15 | 100, Source: "test"})
	clk := newClock()
	m, err := New(d, WithClock(clk.now), WithLoad(ConstLoad{1}))
	if err != nil {
		t.Fatal(err)
	}
	for n := range 32 {
		file, v := "scaling_governor", "performance"
		if n >= 16 {
			file = "energy_performance_preference"
		}
		if err := writeTree(m.Tree(), SysfsWrite{fmt.Sprintf("sys/devices/system/cpu/cpu%d/cpufreq/%s", n, file), v}); err != nil {
			t.Fatal(err)
		}
	}
	clk.add(time.Second)
	// delivered takes mtl-165u's 1700 MHz TSC: put it on this machine's.
	k := float64(m.desc.TSCMHz) / 1700
	got := [2]float64{k * delivered(t, m, clk, 0, time.Second), k * delivered(t, m, clk, 16, time.Second)}
	want := [2]float64{4500, 4500 * math.Sqrt(23.0/40)}
	if d := cmp.Diff(want, got, cmpopts.EquateApprox(0, 0.01)); d != "" {
		t.Errorf("delivered MHz cpu0 (min 4500), cpu16 (min 1800) (-want +got):\n%s", d)
	}
}
