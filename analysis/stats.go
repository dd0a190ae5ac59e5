// Package analysis holds the statistics and comparisons hwpprobe diff makes
// over the runs of an experiment: per side, the median with its exact
// order-statistic confidence interval, and between sides the Mann-Whitney
// U test and the ratio B/A with a distribution-free confidence interval,
// all as benchstat computes them (golang.org/x/perf/benchmath,
// AssumeNothing), plus the warnings a careful reader needs (too few runs,
// outliers, a slow first run, drift against run order). It also condenses
// recordings into the per-side evidence the report prints.
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
	// P is the Mann-Whitney U test's two-sided p-value (benchmath).
	P           float64
	Alpha       float64
	Significant bool // P <= Alpha, as benchstat's "~" rule
	// Ratio is the Hodges-Lehmann estimate of B/A: the median of every
	// ratio b/a over the pairs of runs. RatioLo and RatioHi bound it at
	// level RatioConfidence (Moses' distribution-free interval; 0 and +Inf
	// when the runs are too few for the level).
	Ratio, RatioLo, RatioHi float64
	RatioConfidence         float64
	Warnings                []string
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
		P: cmp.P, Alpha: th.CompareAlpha, Significant: cmp.P <= th.CompareAlpha,
		Warnings: errorStrings(cmp.Warnings)}
	c.Ratio, c.RatioLo, c.RatioHi, c.RatioConfidence = RatioCI(a, b, o.confidence())
	return c, nil
}

// Delta is benchstat's delta column: "~" when not significant, otherwise
// the change of B's median from A's as a signed percentage.
func (c Comparison) Delta() string {
	return benchmath.Comparison{P: c.P, Alpha: c.Alpha}.FormatDelta(c.A.Median, c.B.Median)
}

// PString is benchstat's "(p=0.100 n=3)".
func (c Comparison) PString() string {
	return benchmath.Comparison{P: c.P, N1: c.A.N, N2: c.B.N}.String()
}

func errorStrings(errs []error) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}
