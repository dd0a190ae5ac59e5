// SPDX-License-Identifier: Apache-2.0

package emu

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// budgetRun runs mtl-165u with every CPU busy under governor gov (and, if
// epp is not empty, that energy_performance_preference) until PL1 holds
// (time scale 28: tau 1 s), and returns the package power and the
// delivered and requested MHz of cpu0 (P), cpu4 (E) and cpu12 (LP-E).
func budgetRun(t *testing.T, gov, epp string) (w float64, got, req [3]float64) {
	t.Helper()
	m, clk := load(t, "mtl-165u", 1, WithTimeScale(28))
	for n := range m.NumCPUs() {
		pol := fmt.Sprintf("sys/devices/system/cpu/cpufreq/policy%d/", n)
		if err := write(m, pol+"scaling_governor", gov); err != nil {
			t.Fatal(err)
		}
		if epp == "" {
			continue
		}
		if err := write(m, pol+"energy_performance_preference", epp); err != nil {
			t.Fatal(err)
		}
	}
	clk.add(5 * time.Second)
	w = pkgWatts(m, clk, time.Second)
	for i, n := range []int{0, 4, 12} {
		got[i] = delivered(t, m, clk, n, time.Second)
		m.mu.Lock()
		req[i] = m.operatingPoint(m.cpus[n], 1).mhz
		m.mu.Unlock()
	}
	return w, got, req
}

// TestEPPBudget holds mtl-165u, every CPU busy, at PL1 (15 W) under
// performance (EPP 0, min = max = highest) and under powersave with
// energy_performance_preference "performance" (EPP 16 on this model).
// At EPP 0 the budget is shared uniformly: P, E and LP-E cores all keep
// the same fraction of their request. At EPP 16 a sixteenth of the
// efficient rule moves frequency from the P-cores, whose MHz cost most
// power, to the E and LP-E cores: their fractions rise in that order,
// and the P-cores deliver less than under performance while the E and
// LP-E cores deliver more, within the same 15 W.
func TestEPPBudget(t *testing.T) {
	wPerf, perf, perfReq := budgetRun(t, "performance", "")
	wSave, save, saveReq := budgetRun(t, "powersave", "performance")
	for _, w := range []float64{wPerf, wSave} {
		if math.Abs(w-15) > 1e-6 {
			t.Fatalf("package %.6f W, want PL1 15 W", w)
		}
	}
	var fPerf, fSave [3]float64
	for i := range perf {
		fPerf[i], fSave[i] = perf[i]/perfReq[i], save[i]/saveReq[i]
	}
	if math.Abs(fPerf[1]/fPerf[0]-1) > 1e-6 || math.Abs(fPerf[2]/fPerf[0]-1) > 1e-6 {
		t.Errorf("performance: P, E, LP-E keep %.4f of their requests, want one fraction", fPerf)
	}
	if !(fSave[1] > fSave[0]*1.01 && fSave[2] > fSave[1]*1.01) {
		t.Errorf("powersave EPP 16: P, E, LP-E keep %.4f of their requests, want rising by more than 1%% each", fSave)
	}
	if !(save[0] < perf[0] && save[1] > perf[1] && save[2] > perf[2]) {
		t.Errorf("delivered MHz P, E, LP-E: performance %.1f, powersave EPP 16 %.1f: want P lower, E and LP-E higher", perf, save)
	}
}
