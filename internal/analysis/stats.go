// SPDX-License-Identifier: Apache-2.0

// Package analysis holds the statistics and comparisons hwpprobe diff and
// hwpprobe stat make over the runs of an experiment: per side, the median
// with its exact order-statistic confidence interval, and between sides
// the Mann-Whitney U test and the ratio B/A with a distribution-free
// confidence interval, all as benchstat computes them
// (golang.org/x/perf/benchmath, AssumeNothing), plus the warnings a
// careful reader needs (too few runs, outliers, a slow first run, drift
// against run order). It also condenses recordings into the per-side
// evidence the report prints.
//
// Where hwpprobe departs from benchstat it says so in the comparison's
// Notes: p <= alpha is decided on the U test's exact p-value, a ratio of
// counts (ExactP), not on its float64 rounding.
//
// Two sides: Compare(a, b, Options) (Comparison, error).
//
// N sides, each compared with a reference (as benchstat compares each
// file with its first):
//
//	CompareN(samples []Sample, ref int, o Options) (MultiComparison, error)
//	Holm(p []*big.Rat) []*big.Rat
//
// CompareN runs benchstat's test per pair (SideComparison.Test, equal to a
// two-file benchstat's), adjusts the p-values by Holm's step-down method
// (Holm: the family-wise error rate stays at most alpha) and decides each
// side on its adjusted p; its ratio intervals are simultaneous at the
// stated confidence, each at 1 - (1 - confidence)/m for m comparisons
// (Bonferroni). RunsToReach says how many runs per side, separated as
// observed, the U test needs to reach a level.
package analysis

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
)

// Defaults: the levels benchstat uses.
const (
	DefaultAlpha      = 0.05
	DefaultConfidence = 0.95
)

// MinRunsForSignificance is the fewest runs per side with which the U test
// can reach p < 0.05: with 3+3 runs its smallest p is 0.1, with 4+4 0.029.
const MinRunsForSignificance = 4

// ErrNoRuns is returned when a side has no usable value.
var ErrNoRuns = errors.New("no runs to analyse")

// Options are the statistical levels.
type Options struct {
	Alpha      float64 // significance level of the U test (0: DefaultAlpha)
	Confidence float64 // level of the intervals (0: DefaultConfidence)
}

func (o Options) alpha() float64 {
	if o.Alpha <= 0 {
		return DefaultAlpha
	}
	return o.Alpha
}

func (o Options) confidence() float64 {
	if o.Confidence <= 0 {
		return DefaultConfidence
	}
	return o.Confidence
}

// Check reports levels outside (0, 1).
func (o Options) Check() error {
	if o.Alpha < 0 || o.Alpha >= 1 {
		return fmt.Errorf("alpha %v is not in (0, 1)", o.Alpha)
	}
	if o.Confidence < 0 || o.Confidence >= 1 {
		return fmt.Errorf("confidence %v is not in (0, 1)", o.Confidence)
	}
	return nil
}

// Summary is one side's values summarised as benchstat does: the median
// and the exact order-statistic confidence interval around it (infinite
// when there are too few values for the level).
type Summary struct {
	N          int
	Values     []float64 // in run order
	Median     float64
	Lo, Hi     float64 // interval around the median; ±Inf when too few values
	Confidence float64 // the interval's actual level (>= the one asked for)
	Warnings   []string
}

// Summarize summarises values (in run order) at the given confidence.
func Summarize(values []float64, confidence float64) Summary {
	if confidence <= 0 {
		confidence = DefaultConfidence
	}
	s := benchmath.NewSample(slices.Clone(values), &benchmath.DefaultThresholds)
	sum := benchmath.AssumeNothing.Summary(s, confidence)
	return Summary{N: len(values), Values: slices.Clone(values), Median: sum.Center,
		Lo: sum.Lo, Hi: sum.Hi, Confidence: sum.Confidence, Warnings: errorStrings(sum.Warnings)}
}

// Finite reports whether the interval is finite.
func (s Summary) Finite() bool { return !math.IsInf(s.Lo, 0) && !math.IsInf(s.Hi, 0) }

// PctRange is benchstat's "± x%" of the interval: its larger half-width
// as a percentage of the median; "∞" when infinite.
func (s Summary) PctRange() string {
	return benchmath.Summary{Center: s.Median, Lo: s.Lo, Hi: s.Hi}.PctRangeString()
}

// Comparison compares side B with side A.
type Comparison struct {
	A, B Summary
	// P is the Mann-Whitney U test's two-sided p-value as benchmath
	// computes it, a float64.
	P float64
	// PExact is the same p-value as the ratio of counts it is, where the
	// test uses the exact distribution of U (at most 50 runs a side, or
	// 25 with ties); nil where it uses the normal approximation.
	PExact *ExactP `json:"-"`
	Alpha  float64
	// Significant is p <= Alpha, decided on PExact where known (with Alpha
	// the decimal it was stated as, LevelRat), else on P. benchstat
	// compares the float P, which can round a p equal to alpha either way:
	// Notes says so where that would print otherwise.
	Significant bool
	// Ratio is the Hodges-Lehmann estimate of B/A: the median of every
	// ratio b/a over the pairs of runs. RatioLo and RatioHi bound it at
	// level RatioConfidence (Moses' distribution-free interval; 0 and +Inf
	// when the runs are too few for the level).
	Ratio, RatioLo, RatioHi float64
	RatioConfidence         float64
	// Warnings are benchstat's warnings on the test (its footnotes, e.g.
	// too few runs to detect a difference at alpha).
	Warnings []string
	// Notes are hwpprobe's: a decision on the exact p that benchstat's
	// floating-point comparison would make otherwise, and a ratio that
	// points the other way from the medians' change.
	Notes []string
}

// Compare compares b with a (values in run order).
func Compare(a, b []float64, o Options) (Comparison, error) {
	if len(a) == 0 || len(b) == 0 {
		return Comparison{}, ErrNoRuns
	}
	if err := o.Check(); err != nil {
		return Comparison{}, err
	}
	th := benchmath.Thresholds{CompareAlpha: o.alpha()}
	sa := benchmath.NewSample(slices.Clone(a), &th)
	sb := benchmath.NewSample(slices.Clone(b), &th)
	cmp := benchmath.AssumeNothing.Compare(sa, sb)
	c := Comparison{A: Summarize(a, o.confidence()), B: Summarize(b, o.confidence()),
		P: cmp.P, PExact: exactP(a, b), Alpha: th.CompareAlpha, Warnings: errorStrings(cmp.Warnings)}
	c.Significant = pRat(c.PExact, c.P).Cmp(LevelRat(c.Alpha)) <= 0
	c.Ratio, c.RatioLo, c.RatioHi, c.RatioConfidence = RatioCI(a, b, o.confidence())
	c.Notes = append(c.exactNote(), c.directionNote()...)
	return c, nil
}

// exactNote says where the decision on the exact p differs from
// benchstat's comparison of its float with alpha.
func (c Comparison) exactNote() []string {
	if c.PExact == nil || c.Significant == (c.P <= c.Alpha) {
		return nil
	}
	if c.Significant {
		return []string{fmt.Sprintf("p = %s exactly, <= alpha %v: significant; benchstat compares its floating-point p (%v) with alpha and would print ~",
			c.PExact, c.Alpha, c.P)}
	}
	return []string{fmt.Sprintf("p = %s exactly, > alpha %v: not significant; benchstat compares its floating-point p (%v) with alpha and would count it significant",
		c.PExact, c.Alpha, c.P)}
}

// directionNote says when the ratio and the medians' change point
// opposite ways.
func (c Comparison) directionNote() []string {
	d := c.B.Median - c.A.Median
	if !(d > 0 && c.Ratio < 1 || d < 0 && c.Ratio > 1) {
		return nil
	}
	return []string{fmt.Sprintf("the ratio B/A %.4g (the median of all %d ratios of a B run to an A run) and the medians' change %+.2f%% point opposite ways: the runs overlap too much to say which side is larger",
		c.Ratio, c.A.N*c.B.N, 100*(c.B.Median/c.A.Median-1))}
}

// Delta is benchstat's delta column: "~" when not significant, otherwise
// the change of B's median from A's as a signed percentage.
func (c Comparison) Delta() string {
	if !c.Significant {
		return "~"
	}
	return benchmath.Comparison{}.FormatDelta(c.A.Median, c.B.Median)
}

// PString is benchstat's "(p=0.100 n=3)".
func (c Comparison) PString() string {
	return benchmath.Comparison{P: c.P, N1: c.A.N, N2: c.B.N}.String()
}

// Footnotes are benchstat's footnotes of the comparison, each once: the
// summaries' (too few runs for a finite interval) and the test's (too few
// runs to detect a difference at alpha, all values equal).
func (c Comparison) Footnotes() []string {
	var out []string
	for _, w := range slices.Concat(c.A.Warnings, c.B.Warnings, c.Warnings) {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// FamilyNote is the one-line note on multiple comparisons where tests
// figures are each tested at alpha without adjustment ("" for fewer than
// two): with no real difference, about tests·alpha of them come out
// significant by chance.
func FamilyNote(tests int, alpha float64) string {
	if tests < 2 {
		return ""
	}
	return fmt.Sprintf("multiple comparisons: %d figures are each tested at alpha %v, not adjusted; with no real difference about %.2g of them would come out significant by chance, so the verdict rests on time alone",
		tests, alpha, float64(tests)*alpha)
}

func errorStrings(errs []error) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}
