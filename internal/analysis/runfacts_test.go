// SPDX-License-Identifier: Apache-2.0

package analysis_test

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/testexp"
)

// smallSeed is the seed experiment with runs of 6 to 9 one-second
// samples.
func smallSeed() testexp.Experiment {
	e := testexp.Seed()
	e.A.Seconds, e.B.Seconds = []float64{6, 7, 8, 9}, []float64{6, 7, 8, 9}
	return e
}

// readExp reads a synthetic experiment whole, for a test to change.
func readExp(t *testing.T, e testexp.Experiment) *recording.Recording {
	t.Helper()
	rec, err := recording.Read(bytes.NewReader(e.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func analyzeRec(t *testing.T, rec *recording.Recording) *analysis.Result {
	t.Helper()
	res, err := analysis.Analyze([]analysis.Source{{Name: "exp.hwpr", Rec: rec}}, analysis.Options{}, true)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// setStatus gives every CPU row of the run's samples IA32_HWP_STATUS,
// with Excursion_To_Minimum set from sample from on (from < 0: never) on
// the CPUs listed.
func setStatus(run *recording.Run, from int, cpus ...int) {
	for i := range run.Samples {
		for j := range run.Samples[i].CPUs {
			row := &run.Samples[i].CPUs[j]
			v := uint64(0)
			for _, c := range cpus {
				if c == row.CPU && from >= 0 && i >= from {
					v = 1 << 2
				}
			}
			row.Regs = append(row.Regs, recording.Reg{MSR: hwp.MSR_IA32_HWP_STATUS, Value: v})
		}
	}
}

// TestExcursionEdges: newly set excursion bits are counted per run as the
// sampled 0 -> 1 changes. Side A's first run sets the bit on CPU 0 (a
// P-core) at its third sample and on CPU 2 (an E-core) at its fifth;
// every later run, of both sides, starts with both set (the bit is
// sticky) and sets nothing. Side B's sticky share of CPU-samples is then
// 50% though it never had an excursion; its new excursions are none.
func TestExcursionEdges(t *testing.T) {
	rec := readExp(t, smallSeed())
	first := true
	for _, run := range rec.Runs {
		if first && run.Start.Side == "A" {
			setStatus(run, -1)
			for i := range run.Samples {
				for j := range run.Samples[i].CPUs {
					row := &run.Samples[i].CPUs[j]
					if row.CPU == 0 && i >= 2 || row.CPU == 2 && i >= 4 {
						row.Regs[len(row.Regs)-1].Value = 1 << 2
					}
				}
			}
			first = false
			continue
		}
		setStatus(run, 0, 0, 2)
	}
	res := analyzeRec(t, rec)
	got := map[int]map[string]int{}
	for _, r := range res.Runs {
		got[r.Run] = r.Facts.ExcursionEdges
	}
	want := map[int]map[string]int{1: {"P": 1, "E": 1}, 2: {}, 3: {}, 4: {}, 5: {}, 6: {}, 7: {}, 8: {}}
	if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("new excursions per run (-want +got):\n%s", d)
	}
	sides := map[string]any{}
	for _, s := range res.Sides {
		sides[s.Label] = []any{s.NewExcursions, s.ExcursionRuns}
		if s.Label == "B" && s.Excursions != 0.5 {
			t.Errorf("B's sticky share = %v, want 0.5 (2 of 4 CPUs in every sample)", s.Excursions)
		}
	}
	if d := cmp.Diff(map[string]any{"A": []any{map[string]int{"P": 1, "E": 1}, 1}, "B": []any{map[string]int{}, 0}}, sides); d != "" {
		t.Errorf("sides' new excursions (-want +got):\n%s", d)
	}
}

// TestLimitSeconds: the seconds under each limit reason are the sum of
// the measured intervals of the samples where it was active. The seed
// experiment has PkgPwrL1 (bit 10) in every other sample (k odd); the
// test gives sample k the interval 0.5 + 0.1 k s and sets bit 11
// (PkgPwrL2) in sample 0 too, so run 1 (6 samples, k = 1..6) has L1 in
// k = 1, 3, 5: 0.6 + 0.8 + 1.0 = 2.4 s, L2 in k = 1 only: 0.6 s; its
// sampled seconds 0.6 + ... + 1.1 = 5.1.
func TestLimitSeconds(t *testing.T) {
	rec := readExp(t, smallSeed())
	run := rec.Runs[0]
	for i := range run.Samples {
		run.Samples[i].IntervalNs = int64((0.5 + 0.1*float64(i+1)) * 1e9)
		if i == 0 {
			run.Samples[i].Packages[0].Regs[0].Value |= 1 << 11
		}
	}
	res := analyzeRec(t, rec)
	f := res.Runs[0].Facts
	want := map[string]float64{"PkgPwrL1": 2.4, "PkgPwrL2": 0.6}
	if d := cmp.Diff(want, f.LimitSeconds, cmpopts.EquateApprox(0, 1e-9)); d != "" {
		t.Errorf("limit seconds (-want +got):\n%s", d)
	}
	if math.Abs(f.SampledSeconds-5.1) > 1e-9 {
		t.Errorf("sampled seconds = %v, want 5.1", f.SampledSeconds)
	}
	// Run 2 (B, 6 samples of 1 s): L1 in k = 1, 3, 5.
	if got := res.Runs[1].Facts.LimitSeconds; !cmp.Equal(got, map[string]float64{"PkgPwrL1": 3}) {
		t.Errorf("run 2's limit seconds = %v, want PkgPwrL1 3", got)
	}
}

// TestPhaseSplit: samples are parallel when more than half the CPUs are
// busy (Busy% x CPUs / 100 > CPUs / 2) and serial when at most one is.
// The seed experiment's 4 CPUs get, in run 1's samples 1 to 6, the whole
// machine's Busy% 90, 20, 40, 75, 25, 50 (3.6, 0.8, 1.6, 3.0, 1.0, 2.0
// CPUs busy): parallel 1 and 4, serial 2 and 5, neither 3 and 6. The
// P-cores' Bzy_MHz in those samples is 1000 k with Busy% 10 k, so the
// busy-weighted mean is (10·1000 + 40·4000) / 50 = 3400 MHz in the
// parallel samples and (20·2000 + 50·5000) / 70 = 4142.857 MHz in the
// serial ones.
func TestPhaseSplit(t *testing.T) {
	rec := readExp(t, smallSeed())
	run := rec.Runs[0]
	busy := []float64{90, 20, 40, 75, 25, 50}
	for i := range run.Samples {
		for j := range run.Samples[i].Summaries {
			r := &run.Samples[i].Summaries[j]
			switch r.Type {
			case "all":
				r.Values[1] = recording.Value(busy[i])
			case "P":
				r.Values[1], r.Values[2] = recording.Value(10*(i+1)), recording.Value(1000*(i+1))
			}
		}
	}
	res := analyzeRec(t, rec)
	f := res.Runs[0].Facts
	if f.Parallel.Seconds != 2 || f.Serial.Seconds != 2 {
		t.Errorf("parallel %v s, serial %v s, want 2 and 2", f.Parallel.Seconds, f.Serial.Seconds)
	}
	got := []float64{f.Parallel.BzyMHz["P"], f.Serial.BzyMHz["P"]}
	if d := cmp.Diff([]float64{3400, 290000.0 / 70}, got, cmpopts.EquateApprox(0, 1e-9)); d != "" {
		t.Errorf("P-cores' Bzy_MHz parallel, serial (-want +got):\n%s", d)
	}
	for _, tc := range []struct {
		busy float64
		cpus int
		want int
	}{{50, 4, analysis.PhaseOther}, {50.1, 4, analysis.PhaseParallel}, {25, 4, analysis.PhaseSerial}, {25.1, 4, analysis.PhaseOther}, {100, 1, analysis.PhaseParallel}} {
		if got := analysis.PhaseOf(tc.busy, tc.cpus); got != tc.want {
			t.Errorf("PhaseOf(%v, %d) = %d, want %d", tc.busy, tc.cpus, got, tc.want)
		}
	}
}

// TestPowerSplit: the package's mean power splits into the cores' and the
// rest; the seed experiment's side A draws 28 W of which the cores 14 W,
// with no graphics or psys domain.
func TestPowerSplit(t *testing.T) {
	res := analyzeRec(t, readExp(t, smallSeed()))
	got := res.Runs[0].Facts.Power
	want := analysis.Power{Package: 28, Cores: 14, Graphics: math.NaN(), Rest: 14, Psys: math.NaN()}
	if d := cmp.Diff(want, got, cmpopts.EquateNaNs()); d != "" {
		t.Errorf("power (-want +got):\n%s", d)
	}
}

// TestPL2Window: the time inside the PL2 window, by hand: PL1 15 W, one
// second per sample, powers 5, 30, 30, 15.5, 15.8 W: 15.5 W is within 5%
// of PL1 (held at PL1), 15.8 W above it, so 30, 30 and 15.8 count: 3 s.
// Then the warning on the sides' median shares.
func TestPL2Window(t *testing.T) {
	dt, p := []float64{1, 1, 1, 1, 1}, []float64{5, 30, 30, 15.5, 15.8}
	if got := analysis.PL2Window(dt, p, 15); got != 3 {
		t.Errorf("PL2 window %v s, want 3", got)
	}
	if got := analysis.PL2Window(dt, p, 0); !math.IsNaN(got) {
		t.Errorf("without PL1: %v, want NaN", got)
	}
	sides := []analysis.SideResult{{Label: "A", PL2Share: 0.45}, {Label: "B", PL2Share: 0.12}}
	if w := analysis.PL2Warning(sides); w == "" {
		t.Errorf("no warning for shares 45%% and 12%%")
	}
	sides[1].PL2Share = 0.40
	if w := analysis.PL2Warning(sides); w != "" {
		t.Errorf("warning for shares 45%% and 40%%: %s", w)
	}
}

// TestPowerLimitsEmulated: the power limits in force come from the
// snapshots of the emulated Core Ultra 7 165U experiment (PL1 15 W over
// 28 s, PL2 57 W, in MSR_PKG_POWER_LIMIT and the intel-rapl:0 zone, as
// docs/emulator.md describes the machine), before and after every run,
// and from a traced write of MSR_PKG_POWER_LIMIT added to run 1 with PL1
// 80 units of 1/8 W (the RAPL units of the machine) = 10 W and PL2 456
// units = 57 W.
func TestPowerLimitsEmulated(t *testing.T) {
	rec, err := recording.ReadFile("../files/recording/testdata/v2/emu-mtl-diff.rec")
	if err != nil {
		t.Fatal(err)
	}
	r1 := rec.Runs[0]
	pl := uint64(456)<<32 | 1<<47 | 1<<15 | 80 // PL2 57 W and PL1 10 W, enabled
	r1.Trace = append(r1.Trace, recording.TraceEvent{TimeNs: r1.Start.TimeNs + 1e8, CPU: 0, PID: 9, Comm: "powercap", MSR: 0x610, Value: pl})
	res := analyzeRec(t, rec)
	for _, r := range res.Runs {
		var got []string
		for _, s := range r.Facts.Limits {
			got = append(got, s.How+" "+s.Source+" "+fmtW(s.PL1W)+"/"+fmtW(s.PL2W))
		}
		want := []string{"before MSR_PKG_POWER_LIMIT 15/57", "before intel-rapl:0 15/57"}
		if r.Run == r1.Start.Run {
			want = append(want, "write MSR_PKG_POWER_LIMIT 10/57")
		}
		want = append(want, "after MSR_PKG_POWER_LIMIT 15/57", "after intel-rapl:0 15/57")
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("run %d's power limits (-want +got):\n%s", r.Run, d)
		}
	}
}

func fmtW(w float64) string { return strconv.FormatFloat(w, 'g', -1, 64) }

// TestStoppingLevelOffline: an experiment run with --runs auto is tested
// offline at the level its last look spent, not at --alpha. 4+4
// completely separated runs give p = 2/70 = 0.0286: significant at
// alpha 0.05 and at the first look's level (0.0286, the smallest p of
// 4+4), not at a later look's (0.05 - 0.0286) / 2 = 0.0107 (MaxRuns 6).
func TestStoppingLevelOffline(t *testing.T) {
	first := analysis.StopRule{MaxRuns: 6}.LookAlpha(4)
	later := analysis.StopRule{MaxRuns: 6}.LookAlpha(5)
	tests := []struct {
		name  string
		stop  *recording.Stopping
		alpha float64
		want  bool
	}{
		{"fixed runs", nil, 0.05, true},
		{"stopped at the first look", &recording.Stopping{Alpha: 0.05, Precision: 0.05, MinRuns: 4, MaxRuns: 6, Spent: first, Settled: true,
			Looks: []recording.Look{{N: 4, Level: first, P: 2.0 / 70, Verdict: "significant"}}}, 0.05, true},
		{"last look at a later level", &recording.Stopping{Alpha: 0.05, Precision: 0.05, MinRuns: 4, MaxRuns: 6, Spent: first + later,
			Looks: []recording.Look{{N: 4, Level: first, Verdict: "unsettled"}, {N: 5, Level: later, Verdict: "unsettled"}}}, 0.05, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := smallSeed()
			e.B.Seconds = []float64{3, 4, 5, 5.5} // all faster than A's 6 to 9 s
			e.Stopping = tc.stop
			res, err := analysis.Analyze([]analysis.Source{{Name: "exp.hwpr", Rec: readExp(t, e)}}, analysis.Options{Alpha: tc.alpha}, true)
			if err != nil {
				t.Fatal(err)
			}
			c := res.Time.Comparison
			if c.Significant != tc.want || math.Abs(c.P-2.0/70) > 1e-12 {
				t.Errorf("significant %v (p %v), want %v", c.Significant, c.P, tc.want)
			}
			hasNote := false
			for _, n := range res.Notes() {
				hasNote = hasNote || strings.Contains(n, "--runs auto")
			}
			if hasNote != (tc.stop != nil) {
				t.Errorf("notes %q: want the stopping rule's note only with a stopping record", res.Notes())
			}
		})
	}
}
