// SPDX-License-Identifier: Apache-2.0

package analysis

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
)

// DefaultExplainPrecision is explain's default equivalence margin: a step
// whose ratio interval lies within [1/(1+p), 1+p] changes nothing that
// matters.
const DefaultExplainPrecision = 0.02

// Step verdicts (StepEffect.Verdict, Interaction.Verdict).
const (
	Causes     = "causes"     // the interval excludes 1
	Equivalent = "equivalent" // the interval lies within the precision
	Undecided  = "undecided"  // neither
)

// StepEffect is one step of explain's chain: the change of a figure from
// side From to side To.
type StepEffect struct {
	From, To string   // the sides' labels
	Fields   []string // the fields the step changes; none between register twins
	// LogRatio is log(median To / median From): the steps' LogRatios add
	// up to the total's.
	LogRatio float64
	// Lo and Hi bound the ratio To/From (Moses' interval, RatioCI) at
	// the attribution's Level.
	Lo, Hi  float64
	Verdict string
}

// Interaction is, with two changed fields, how much the second field's
// effect depends on the first: log(B/E) - log(M/T) over the 2x2 corners T
// (both at A's values), M (the first at B's), E (the second at B's) and B.
type Interaction struct {
	Fields   [2]string
	LogRatio float64 // from the corners' medians
	// Lo and Hi bound exp(LogRatio): from the intervals of B/E and M/T,
	// each at Level, [lo(B/E)/hi(M/T), hi(B/E)/lo(M/T)].
	Lo, Hi  float64
	Verdict string
}

// Attribution is a figure's change from A to B attributed to the steps
// of explain's chain.
type Attribution struct {
	Figure, Unit string
	A, B         string
	// Total is log(median B / median A), the sum of the steps'
	// LogRatios.
	Total       float64
	Steps       []StepEffect
	Interaction *Interaction
	Precision   float64
	// Level is each interval's level: 1 - (1 - Confidence)/m over the m
	// intervals (the steps', and B/E's for the interaction), so that all
	// hold together with probability at least Confidence (Bonferroni).
	Confidence, Level float64
}

// Attribute attributes the change of a figure from the chain's first side
// to its last to the chain's steps. samples holds every side's values
// (positive), chain says which sides form the chain and the 2x2 corners;
// precision is the equivalence margin (e.g. 0.02). Each step's verdict is
// Causes when its ratio interval excludes 1, Equivalent when it lies
// within [1/(1+precision), 1+precision], Undecided otherwise; the same for
// the interaction.
func Attribute(figure, unit string, samples []Sample, chain recording.Explain, precision float64, o Options) (Attribution, error) {
	if err := o.Check(); err != nil {
		return Attribution{}, err
	}
	if err := checkChain(chain, len(samples)); err != nil {
		return Attribution{}, err
	}
	if precision <= 0 || precision >= 1 {
		return Attribution{}, fmt.Errorf("%w: precision %v is not in (0, 1)", ErrSides, precision)
	}
	med := make([]float64, len(samples))
	for i, s := range samples {
		if len(s.Values) == 0 {
			return Attribution{}, fmt.Errorf("%s: %w", s.Label, ErrNoRuns)
		}
		for _, v := range s.Values {
			if !(v > 0) || math.IsInf(v, 0) {
				return Attribution{}, fmt.Errorf("%s: %s %v is not a positive number", s.Label, figure, v)
			}
		}
		med[i] = medianOf(s.Values)
	}
	m := len(chain.Chain) - 1
	if len(chain.Corners) == 4 {
		m++
	}
	conf := o.confidence()
	first, last := chain.Chain[0], chain.Chain[len(chain.Chain)-1]
	at := Attribution{Figure: figure, Unit: unit, A: samples[first].Label, B: samples[last].Label,
		Precision: precision, Confidence: conf, Level: 1 - (1-conf)/float64(m)}
	at.Total = math.Log(med[last] / med[first])
	ratio := func(from, to int) (lo, hi float64) {
		_, lo, hi, _ = RatioCI(samples[from].Values, samples[to].Values, at.Level)
		return lo, hi
	}
	for k := range len(chain.Chain) - 1 {
		from, to := chain.Chain[k], chain.Chain[k+1]
		lo, hi := ratio(from, to)
		at.Steps = append(at.Steps, StepEffect{From: samples[from].Label, To: samples[to].Label, Fields: chain.Fields[k],
			LogRatio: math.Log(med[to] / med[from]), Lo: lo, Hi: hi, Verdict: decide(lo, hi, precision)})
	}
	if c := chain.Corners; len(c) == 4 {
		t, mm, e, b := c[0], c[1], c[2], c[3]
		loBE, hiBE := ratio(e, b)
		loMT, hiMT := ratio(t, mm)
		in := &Interaction{LogRatio: math.Log(med[b]/med[e]) - math.Log(med[mm]/med[t]),
			Lo: loBE / hiMT, Hi: hiBE / loMT}
		if math.IsNaN(in.Lo) {
			in.Lo = 0
		}
		if math.IsNaN(in.Hi) {
			in.Hi = math.Inf(1)
		}
		in.Verdict = decide(in.Lo, in.Hi, precision)
		if f := fieldsBetween(chain, t, mm); len(f) == 1 {
			in.Fields[0] = f[0]
		}
		if f := fieldsBetween(chain, mm, b); len(f) == 1 {
			in.Fields[1] = f[0]
		}
		at.Interaction = in
	}
	return at, nil
}

// fieldsBetween are the fields of the chain's step from side a to side b.
func fieldsBetween(c recording.Explain, a, b int) []string {
	for k := range len(c.Chain) - 1 {
		if c.Chain[k] == a && c.Chain[k+1] == b {
			return c.Fields[k]
		}
	}
	return nil
}

// decide is a step's verdict from its ratio interval.
func decide(lo, hi, precision float64) string {
	switch {
	case lo > 1 || hi < 1:
		return Causes
	case lo >= 1/(1+precision) && hi <= 1+precision:
		return Equivalent
	}
	return Undecided
}

// checkChain checks that a chain names sides that exist: at least two,
// each once, a field list per step, and four distinct corners or none.
func checkChain(c recording.Explain, n int) error {
	if len(c.Chain) < 2 || len(c.Fields) != len(c.Chain)-1 {
		return fmt.Errorf("%w: the chain has %d sides and %d steps", ErrSides, len(c.Chain), len(c.Fields))
	}
	all := append(slices.Clone(c.Chain), c.Corners...)
	for _, i := range all {
		if i < 0 || i >= n {
			return fmt.Errorf("%w: the chain names side %d of %d", ErrSides, i, n)
		}
	}
	if len(c.Corners) != 0 && len(c.Corners) != 4 {
		return fmt.Errorf("%w: %d corners, want 4 or none", ErrSides, len(c.Corners))
	}
	if s := slices.Sorted(slices.Values(c.Chain)); len(slices.Compact(s)) != len(c.Chain) {
		return fmt.Errorf("%w: the chain names a side twice", ErrSides)
	}
	return nil
}

// Explain attributes, in an experiment of hwpprobe explain (its meta's
// Explain), the change of the time from A to B, and of the energy when
// every side measured it, to the chain's steps (Attribute), and sets
// Attributions.
func (res *Result) Explain(precision float64) error {
	chain := res.Meta.Explain
	if chain == nil {
		return fmt.Errorf("%w: %s is not an experiment of hwpprobe explain (it has no chain)", ErrNotExperiment, strings.Join(res.Sources, ", "))
	}
	res.Attributions = nil
	for _, f := range timeAndEnergy {
		samples := res.Samples(f.f)
		if f.name == "energy" && slices.ContainsFunc(samples, notMeasured) {
			break // not every side measured the energy
		}
		at, err := Attribute(f.name, f.unit, samples, *chain, precision, res.Options)
		if err != nil {
			return fmt.Errorf("explain %s: %w", f.name, err)
		}
		res.Attributions = append(res.Attributions, at)
	}
	return nil
}

// notMeasured reports a sample with no values, or one not positive.
func notMeasured(s Sample) bool {
	return len(s.Values) == 0 || slices.ContainsFunc(s.Values, func(v float64) bool { return !(v > 0) })
}
