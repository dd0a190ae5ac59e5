// SPDX-License-Identifier: Apache-2.0

package analysis

import (
	"errors"
	"fmt"
	"math"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
)

// DefaultPrecision is the ratio's relative half-width (and the equivalence
// margin) the stopping rule settles for: 5%.
const DefaultPrecision = 0.05

// StopRule is the adaptive stopping rule of `--runs auto`: the experiment
// looks at the runs each time both sides have n runs, for n = MinRuns ..
// MaxRuns, and stops at the first look where the verdict is settled.
//
// The rule spends the significance level alpha over the looks (a union
// bound, so that the chance of calling a difference when A = B is at most
// alpha however many looks are made):
//
//   - the first look, at n = MinRuns, tests at level a1, the smallest
//     p-value the U test can give with n+n runs, when that is below alpha
//     (so it stops only on complete separation of the sides; 0.0286 at
//     4+4), else at 0;
//   - each later look tests at (alpha - a1) / (number of later looks).
//
// At look k with level a_k, the ratio B/A's interval is Moses' at level
// 1 - a_k. The verdict is settled when
//
//   - significant: p <= a_k and the interval's larger relative half-width
//     (hi/ratio - 1 or 1 - lo/ratio) is at most Precision; or
//   - equivalent: the interval lies inside [1 - Precision, 1 + Precision]
//     (any difference is shown to be smaller than the precision).
//
// Otherwise the experiment goes on; at MaxRuns it stops with the last
// look's test as the verdict ("not settled").
type StopRule struct {
	Alpha     float64 // 0: DefaultAlpha
	Precision float64 // 0: DefaultPrecision
	MinRuns   int     // 0: MinRunsForSignificance
	MaxRuns   int     // required, >= MinRuns
}

// ErrStopRule reports an unusable rule.
var ErrStopRule = errors.New("invalid stopping rule")

func (r StopRule) withDefaults() StopRule {
	if r.Alpha <= 0 {
		r.Alpha = DefaultAlpha
	}
	if r.Precision <= 0 {
		r.Precision = DefaultPrecision
	}
	if r.MinRuns <= 0 {
		r.MinRuns = MinRunsForSignificance
	}
	return r
}

// Check reports a rule that cannot work.
func (r StopRule) Check() error {
	r = r.withDefaults()
	switch {
	case r.Alpha >= 1:
		return fmt.Errorf("%w: alpha %v is not in (0, 1)", ErrStopRule, r.Alpha)
	case r.Precision >= 1:
		return fmt.Errorf("%w: precision %v is not in (0, 1)", ErrStopRule, r.Precision)
	case r.MinRuns < 2:
		return fmt.Errorf("%w: at least 2 runs per side are needed", ErrStopRule)
	case r.MaxRuns < r.MinRuns:
		return fmt.Errorf("%w: --max-runs %d is below the first look's %d runs per side", ErrStopRule, r.MaxRuns, r.MinRuns)
	}
	return nil
}

// uMinP is the smallest two-sided p-value of the U test with n+n runs:
// 2 / C(2n, n).
func uMinP(n int) float64 {
	c := 1.0
	for i := 1; i <= n; i++ {
		c = c * float64(n+i) / float64(i)
	}
	return math.Min(1, 2/c)
}

// LookAlpha is the significance level spent at the look with n runs per
// side (0 outside MinRuns..MaxRuns).
func (r StopRule) LookAlpha(n int) float64 {
	r = r.withDefaults()
	if n < r.MinRuns || n > r.MaxRuns {
		return 0
	}
	a1 := uMinP(r.MinRuns)
	if a1 >= r.Alpha {
		a1 = 0
	}
	if n == r.MinRuns {
		if r.MaxRuns == r.MinRuns {
			return r.Alpha
		}
		return a1
	}
	return (r.Alpha - a1) / float64(r.MaxRuns-r.MinRuns)
}

// Verdicts of a look.
const (
	VerdictSignificant = "significant"
	VerdictEquivalent  = "equivalent" // shown smaller than the precision
	VerdictUnsettled   = "unsettled"
)

// Decision is the outcome of one look.
type Decision struct {
	Stop bool
	// Settled: the look settled the verdict (significant with the
	// interval within the precision, or equivalent), as opposed to a
	// stop at MaxRuns.
	Settled bool
	Verdict string // VerdictSignificant, VerdictEquivalent, VerdictUnsettled
	N       int    // runs per side at this look
	Level   float64
	// Comparison is made at the look's level: Alpha = Level, ratio
	// interval at 1 - Level.
	Comparison Comparison
}

// Decide looks at the runs so far. Sides with different counts are looked
// at with the smaller count's first runs.
func (r StopRule) Decide(a, b []float64) (Decision, error) {
	if err := r.Check(); err != nil {
		return Decision{}, err
	}
	r = r.withDefaults()
	n := min(len(a), len(b))
	d := Decision{N: n, Verdict: VerdictUnsettled}
	if n < r.MinRuns {
		return d, nil
	}
	d.Level = r.LookAlpha(n)
	c, err := CompareAtLevel(a[:n], b[:n], d.Level)
	if err != nil {
		return d, err
	}
	d.Comparison = c
	switch {
	case c.Significant && relHalfWidth(c) <= r.Precision:
		d.Stop, d.Settled, d.Verdict = true, true, VerdictSignificant
	case c.RatioLo >= 1-r.Precision && c.RatioHi <= 1+r.Precision:
		d.Stop, d.Settled, d.Verdict = true, true, VerdictEquivalent
	case n >= r.MaxRuns:
		d.Stop = true
		if c.Significant {
			d.Verdict = VerdictSignificant
		}
	}
	return d, nil
}

// CompareAtLevel compares a and b as a look of the stopping rule does,
// at the level it spends: the U test significant when p <= level, the
// ratio's interval at 1 - level. A level of 0 (a first look that cannot
// be significant) is never significant.
func CompareAtLevel(a, b []float64, level float64) (Comparison, error) {
	lvl := level
	if lvl == 0 {
		lvl = math.SmallestNonzeroFloat64
	}
	c, err := Compare(a, b, Options{Alpha: lvl, Confidence: 1 - lvl})
	if err != nil {
		return c, err
	}
	c.Significant = level > 0 && c.P <= level*(1+1e-9)
	c.Notes = c.directionNote() // the look's level is computed, not stated: no note on the exact p
	return c, nil
}

// Record returns the rule as an experiment file records it (format 3.2,
// end's stopping), without looks yet.
func (r StopRule) Record() *recording.Stopping {
	r = r.withDefaults()
	return &recording.Stopping{Alpha: r.Alpha, Precision: r.Precision, MinRuns: r.MinRuns, MaxRuns: r.MaxRuns, Looks: []recording.Look{}}
}

// AddLook records a look's decision in s: its level spent, and whether it
// settled the verdict. A decision before the first look (fewer than
// MinRuns runs a side) is no look.
func AddLook(s *recording.Stopping, d Decision) {
	if d.N < s.MinRuns {
		return
	}
	s.Looks = append(s.Looks, recording.Look{N: d.N, Level: d.Level, P: d.Comparison.P, Verdict: d.Verdict})
	s.Spent += d.Level
	s.Settled = d.Settled
}

func relHalfWidth(c Comparison) float64 {
	if c.Ratio <= 0 || math.IsInf(c.RatioHi, 0) {
		return math.Inf(1)
	}
	return math.Max(c.RatioHi/c.Ratio-1, 1-c.RatioLo/c.Ratio)
}
