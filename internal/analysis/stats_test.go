// SPDX-License-Identifier: Apache-2.0

package analysis

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestSeedNotSignificant(t *testing.T) {
	c, err := Compare([]float64{320.96, 335.10, 334.36}, []float64{257.89, 258.30, 257.94}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Significant || c.Delta() != "~" || c.PString() != "p=0.100 n=3" {
		t.Errorf("seed: significant %v delta %q %q, want ~ (p=0.100 n=3)", c.Significant, c.Delta(), c.PString())
	}
	if c.RatioLo != 0 || !math.IsInf(c.RatioHi, 1) {
		t.Errorf("3+3 ratio interval at 95%%: [%v, %v], want (0, +Inf): too few runs", c.RatioLo, c.RatioHi)
	}
}

// uBrute enumerates every split of n+m ranks to get U's null distribution.
func uBrute(n, m int) []float64 {
	total := n + m
	pmf := make([]float64, n*m+1)
	count := 0
	for mask := 0; mask < 1<<total; mask++ {
		if popcount(mask) != n {
			continue
		}
		count++
		u, bs := 0, 0
		for r := 0; r < total; r++ { // ranks ascending; bit set = from a
			if mask&(1<<r) != 0 {
				u += bs
			} else {
				bs++
			}
		}
		pmf[u]++
	}
	for i := range pmf {
		pmf[i] /= float64(count)
	}
	return pmf
}

func popcount(x int) int {
	c := 0
	for ; x != 0; x &= x - 1 {
		c++
	}
	return c
}

func TestUPMF(t *testing.T) {
	for _, sz := range [][2]int{{1, 1}, {2, 3}, {3, 3}, {4, 4}, {5, 3}, {6, 7}} {
		got, want := uPMF(sz[0], sz[1]), uBrute(sz[0], sz[1])
		if d := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-12)); d != "" {
			t.Errorf("U distribution %v (-brute +recurrence):\n%s", sz, d)
		}
	}
}

func TestRatioCI(t *testing.T) {
	a := []float64{100, 101, 102, 103}
	b := []float64{80, 81, 82, 83}
	r, lo, hi, level := RatioCI(a, b, 0.95)
	// 4+4 at 95%: k = 1 (P(U=0) = 1/70), so the interval is the extreme
	// ratios, at level 1 - 2/70.
	want := []float64{median(sortedRatios(a, b)), 80.0 / 103, 83.0 / 100, 1 - 2.0/70}
	if d := cmp.Diff(want, []float64{r, lo, hi, level}, cmpopts.EquateApprox(0, 1e-12)); d != "" {
		t.Errorf("RatioCI (-want +got):\n%s", d)
	}
	// 5+5 at 90%: P(U<=4) = 12/252 <= 0.05 < P(U<=5) = 19/252, so k = 5.
	a5, b5 := []float64{1, 2, 3, 4, 5}, []float64{1.5, 2.5, 3.5, 4.5, 5.5}
	_, lo, hi, level = RatioCI(a5, b5, 0.90)
	d := sortedRatios(a5, b5)
	if lo != d[4] || hi != d[len(d)-5] || math.Abs(level-(1-24.0/252)) > 1e-12 {
		t.Errorf("5+5 at 90%%: [%v %v] level %v, want [%v %v] level %v", lo, hi, level, d[4], d[len(d)-5], 1-24.0/252)
	}
}

func sortedRatios(a, b []float64) []float64 {
	var d []float64
	for _, x := range a {
		for _, y := range b {
			d = append(d, y/x)
		}
	}
	slices.Sort(d)
	return d
}

// TestRatioCoverage checks by simulation that the interval holds the true
// ratio at least as often as its level says, for lognormal run times.
func TestRatioCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const trials = 2000
	for _, n := range []int{5, 8, 12} {
		covered, levels := 0, 0.0
		for range trials {
			a, b := make([]float64, n), make([]float64, n)
			for i := range a {
				a[i] = 100 * math.Exp(0.03*rng.NormFloat64())
				b[i] = 80 * math.Exp(0.03*rng.NormFloat64())
			}
			_, lo, hi, level := RatioCI(a, b, 0.95)
			levels += level
			if lo <= 0.8 && 0.8 <= hi {
				covered++
			}
		}
		// Binomial sampling error of 2000 trials at 95%: sd 0.5%.
		if got, want := float64(covered)/trials, levels/trials-0.015; got < want {
			t.Errorf("n=%d: coverage %.3f below the interval's level %.3f (less 3 sd)", n, got, levels/trials)
		}
		t.Logf("%d+%d runs: coverage %.4f, level %.4f", n, n, float64(covered)/trials, levels/trials)
	}
}

func TestSideWarnings(t *testing.T) {
	tests := []struct {
		name   string
		values []float64
		want   []string // substrings, one per warning
	}{
		{"three runs", []float64{1, 2, 3}, []string{"fewer than 4 runs"}},
		{"clean", []float64{10, 10.1, 9.9, 10.05, 9.95}, nil},
		{"outlier", []float64{10, 10.1, 9.9, 10.05, 9.95, 10.02, 30}, []string{"run 7 (30) is an outlier"}},
		{"slow first", []float64{11, 10.1, 9.9, 10.05, 9.95, 10.02}, []string{"first run (11) was slower"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := SideWarnings("A", tc.values)
			if len(got) != len(tc.want) {
				t.Fatalf("warnings %q, want %d matching %q", got, len(tc.want), tc.want)
			}
			for i := range got {
				if !strings.Contains(got[i], tc.want[i]) {
					t.Errorf("warning %q lacks %q", got[i], tc.want[i])
				}
			}
		})
	}
}

func TestDrift(t *testing.T) {
	var steady, drifting []Run
	for i := range 12 {
		side, base := "A", 100.0
		if i%4 == 1 || i%4 == 2 { // ABBA
			side, base = "B", 80.0
		}
		noise := []float64{0.1, -0.2, 0.15, -0.05, 0.2, -0.1, 0.05, -0.15, 0.12, -0.08, 0.02, -0.12}[i]
		steady = append(steady, Run{side, i, base * (1 + noise/100)})
		drifting = append(drifting, Run{side, i, base * (1 + 0.01*float64(i) + noise/100)})
	}
	if d := DriftOf(steady, 0.05); len(d.Warnings) != 0 || d.P < 0.05 {
		t.Errorf("steady runs: drift %+v, want none", d)
	}
	d := DriftOf(drifting, 0.05)
	if len(d.Warnings) != 1 || d.Tau < 0.8 || math.Abs(d.PerRun-0.01) > 0.003 {
		t.Errorf("1%% per run: drift %+v, want tau > 0.8, about 1%% per run, one warning", d)
	}
}

func TestKendallExact(t *testing.T) {
	// 4 values in order: one permutation of 24 has 0 inversions, so
	// p = 2/24.
	_, p := kendall([]float64{1, 2, 3, 4})
	if math.Abs(p-2.0/24) > 1e-12 {
		t.Errorf("p = %v, want 1/12", p)
	}
}

// TestSettingBits: which register changes disturb a run. Under an active
// driver the settings fix EPP, min and max; the governor of a passive
// driver writes min, max, desired and PERF_CTL itself, leaving EPP and EPB
// to the settings.
func TestSettingBits(t *testing.T) {
	const (
		hwpReq = 0x774
		perf   = 0x199
		epb    = 0x1b0
	)
	tests := []struct {
		msr      uint32
		old, new uint64
		driver   string
		disturbs bool
	}{
		{hwpReq, 0x10003004, 0x10103004, "intel_pstate", false}, // desired only
		{hwpReq, 0x10003004, 0x10003005, "intel_pstate", true},  // min
		{hwpReq, 0x10003004, 0x80003004, "intel_pstate", true},  // EPP
		{hwpReq, 0x10003004, 0x10003030, "intel_cpufreq", false},
		{hwpReq, 0x10003004, 0x80003004, "intel_cpufreq", true},
		{perf, 0x1000, 0x2000, "intel_cpufreq", false},
		{perf, 0x1000, 0x2000, "intel_pstate", true},
		{epb, 6, 0x16, "intel_cpufreq", false}, // bits above 3:0
		{epb, 6, 0, "intel_cpufreq", true},
		{0xc00102b3, 0x0010403c, 0x00ff403c, "amd-pstate-epp", false}, // desired
		{0xc00102b3, 0x0010403c, 0x8010403c, "amd-pstate", true},      // EPP
	}
	for _, tc := range tests {
		if got := SettingBits(tc.msr, tc.old, tc.driver) != SettingBits(tc.msr, tc.new, tc.driver); got != tc.disturbs {
			t.Errorf("MSR %#x %#x -> %#x under %s: disturbs %v, want %v", tc.msr, tc.old, tc.new, tc.driver, got, tc.disturbs)
		}
	}
}
