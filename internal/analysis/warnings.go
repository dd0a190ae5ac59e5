// SPDX-License-Identifier: Apache-2.0

package analysis

import (
	"fmt"
	"math"
	"slices"
)

// Thresholds of the warnings.
const (
	// OutlierZ is the modified Z-score (|x - median| / (1.4826·MAD)) above
	// which a run is called an outlier: 10 standard deviations of a normal
	// distribution, as hyperfine uses.
	OutlierZ = 10
	// FirstRunZ is the modified Z-score above which a side's first run,
	// when it is also its slowest, is called slower than the rest
	// (Iglewicz and Hoaglin's 3.5).
	FirstRunZ = 3.5
)

// Run is one measured run: its side, its position in the experiment's
// order (from 0, warm-up runs excluded) and its value.
type Run struct {
	Side  string
	Index int
	Value float64
}

// Drift is the trend of run values against their order in the
// experiment, each value taken relative to its side's median so that the
// sides' difference does not count.
type Drift struct {
	Tau      float64 // Kendall's rank correlation of relative value with order
	P        float64 // its two-sided p-value (exact without ties)
	PerRun   float64 // Theil-Sen slope: relative change per run (0.01 = 1%)
	N        int
	Warnings []string
}

// modZ returns each value's modified Z-score (0 when MAD is 0).
func modZ(values []float64) []float64 {
	s := slices.Clone(values)
	slices.Sort(s)
	med := median(s)
	dev := make([]float64, len(s))
	for i, v := range s {
		dev[i] = math.Abs(v - med)
	}
	slices.Sort(dev)
	mad := 1.4826 * median(dev)
	z := make([]float64, len(values))
	for i, v := range values {
		if mad > 0 {
			z[i] = (v - med) / mad
		}
	}
	return z
}

// SideWarnings are the warnings about one side's values (in run order):
// too few runs, outliers, a first run slower than the rest. What is a
// side's label, used in the messages.
func SideWarnings(what string, values []float64) []string {
	var out []string
	if len(values) < MinRunsForSignificance {
		out = append(out, fmt.Sprintf("%s: %d runs; with fewer than %d runs per side no difference can reach p < 0.05",
			what, len(values), MinRunsForSignificance))
	}
	if len(values) < 3 {
		return out
	}
	z := modZ(values)
	for i, zi := range z {
		if math.Abs(zi) > OutlierZ {
			out = append(out, fmt.Sprintf("%s: run %d (%.4g) is an outlier (%.0f robust standard deviations from the median)",
				what, i+1, values[i], math.Abs(zi)))
		}
	}
	if z[0] > FirstRunZ && slices.Max(values) == values[0] {
		out = append(out, fmt.Sprintf("%s: the first run (%.4g) was slower than the rest: caches or a cold machine; consider more --warmup runs",
			what, values[0]))
	}
	return out
}

// DriftOf measures the drift of runs against their order. A significant
// drift (p <= alpha) gives a warning: an interleaved order cancels a
// linear drift from the comparison of sides, but not a change of the
// spread nor a step.
func DriftOf(runs []Run, alpha float64) Drift {
	by := map[string][]float64{}
	for _, r := range runs {
		by[r.Side] = append(by[r.Side], r.Value)
	}
	med := map[string]float64{}
	for s, v := range by {
		v = slices.Clone(v)
		slices.Sort(v)
		med[s] = median(v)
	}
	ordered := slices.Clone(runs)
	slices.SortFunc(ordered, func(a, b Run) int { return a.Index - b.Index })
	rel := make([]float64, len(ordered))
	for i, r := range ordered {
		rel[i] = r.Value/med[r.Side] - 1
	}
	d := Drift{N: len(rel), P: 1}
	if len(rel) < 3 {
		return d
	}
	d.Tau, d.P = kendall(rel)
	d.PerRun = theilSen(rel)
	if d.P <= alpha {
		d.Warnings = append(d.Warnings, fmt.Sprintf("run times drift with run order (%+.2f%% per run, Kendall tau %.2f, p=%.3f): the machine changed during the experiment (temperature, background load)",
			100*d.PerRun, d.Tau, d.P))
	}
	return d
}

// kendall returns Kendall's tau of x against its index and the two-sided
// p-value: exact (the distribution of inversions) when x has no ties and
// at most 50 values, the normal approximation otherwise.
func kendall(x []float64) (tau, p float64) {
	n := len(x)
	conc, disc, ties := 0, 0, false
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			switch {
			case x[j] > x[i]:
				conc++
			case x[j] < x[i]:
				disc++
			default:
				ties = true
			}
		}
	}
	pairs := n * (n - 1) / 2
	tau = float64(conc-disc) / float64(pairs)
	small := min(conc, disc)
	if !ties && n <= 50 {
		cdf := inversionCDF(n)
		return tau, min(1, 2*cdf[small])
	}
	sd := math.Sqrt(float64(n*(n-1)*(2*n+5)) / 18)
	z := (math.Abs(float64(conc-disc)) - 1) / sd
	return tau, min(1, math.Erfc(z/math.Sqrt2))
}

// inversionCDF returns P(I <= k) for the number of inversions I of a
// random permutation of n (Mahonian numbers), k = 0 .. n(n-1)/2.
func inversionCDF(n int) []float64 {
	dist := []float64{1}
	for m := 2; m <= n; m++ {
		next := make([]float64, len(dist)+m-1)
		for k, q := range dist {
			for j := 0; j < m; j++ {
				next[k+j] += q / float64(m)
			}
		}
		dist = next
	}
	acc := 0.0
	for k := range dist {
		acc += dist[k]
		dist[k] = acc
	}
	return dist
}

// theilSen returns the median slope of x against its index.
func theilSen(x []float64) float64 {
	var s []float64
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			s = append(s, (x[j]-x[i])/float64(j-i))
		}
	}
	slices.Sort(s)
	return median(s)
}
