// SPDX-License-Identifier: Apache-2.0

package analysis

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
)

// ErrSides reports an N-side comparison that cannot be made: fewer than
// two sides, or a reference that is not one of them.
var ErrSides = errors.New("bad sides")

// Sample is one side of an N-side comparison: its label and its values in
// run order.
type Sample struct {
	Label  string
	Values []float64
}

// MultiComparison compares every side with a reference side (CompareN).
type MultiComparison struct {
	Labels    []string
	Reference int       // index of the reference side
	Sides     []Summary // each side's median and interval at Confidence (benchstat's)
	// Comparisons holds one entry per side other than the reference, in
	// the sides' order.
	Comparisons []SideComparison
	// Alpha is the family-wise significance level, Confidence the
	// simultaneous level of the ratio intervals.
	Alpha, Confidence float64
	// RatioConfidence is the level asked of each ratio interval:
	// 1 - (1 - Confidence)/m for m comparisons (Bonferroni).
	RatioConfidence float64
}

// SideComparison is one side compared with the reference.
type SideComparison struct {
	Side int // index of the side in MultiComparison.Labels
	// Test is benchstat's comparison of the side (as B) with the
	// reference (as A) on its own: the unadjusted p-value, its exact value
	// and its decision at alpha as a two-file benchstat run makes it; its
	// ratio interval is the simultaneous one, at the family's
	// RatioConfidence.
	Test Comparison
	// PHolm is the p-value adjusted by Holm's method over the family
	// (Holm); exact where every p of the family is.
	PHolm *big.Rat `json:"-"`
	// Significant is PHolm <= alpha: the family's decision.
	Significant bool
	// Notes explain a decision that differs from the unadjusted test's
	// and a ratio that points the other way from the medians.
	Notes []string
}

// PHolmFloat is PHolm as a float64.
func (s SideComparison) PHolmFloat() float64 {
	f, _ := s.PHolm.Float64()
	return f
}

// Delta is benchstat's delta column decided on the adjusted p: "~" when
// not significant in the family, otherwise the change of the side's
// median from the reference's.
func (s SideComparison) Delta() string {
	t := s.Test
	t.Significant = s.Significant
	return t.Delta()
}

// PString is benchstat's "p=0.029 n=4" followed by the adjusted p-value:
// "p=0.029 n=4, Holm p=0.086".
func (s SideComparison) PString() string {
	return fmt.Sprintf("%s, Holm p=%.3f", s.Test.PString(), s.PHolmFloat())
}

// Holm adjusts the p-values of a family of m tests by Holm's step-down
// method (Holm 1979). With the p-values sorted ascending, p(1) <= ... <=
// p(m), the adjusted value of p(i) is
//
//	max over j <= i of min(1, (m - j + 1)·p(j)),
//
// returned in the input order. Calling significant every test whose
// adjusted p is <= alpha keeps the chance of one or more false calls (the
// family-wise error rate) at most alpha, whatever the dependence between
// the tests: the same guarantee as Bonferroni's m·p, never a larger
// adjusted p. The arithmetic is exact (the U test's p-values are ratios of
// counts, ExactP), so a step that lands on alpha counts as <= alpha. Ties
// keep their input order; the result does not depend on it.
func Holm(p []*big.Rat) []*big.Rat {
	m := len(p)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return p[i].Cmp(p[j]) })
	out := make([]*big.Rat, m)
	one := big.NewRat(1, 1)
	run := new(big.Rat)
	for rank, i := range order {
		adj := new(big.Rat).Mul(p[i], big.NewRat(int64(m-rank), 1))
		if adj.Cmp(one) > 0 {
			adj.Set(one)
		}
		if adj.Cmp(run) > 0 {
			run.Set(adj)
		}
		out[i] = new(big.Rat).Set(run)
	}
	return out
}

// CompareN compares each side with the reference side (index ref) as
// benchstat compares each file with its first: the U test and the medians
// per pair. For the family of m = len(samples)-1 comparisons:
//
//   - the p-values are adjusted by Holm's method (Holm), and a side
//     differs significantly from the reference when its adjusted p is <=
//     o.Alpha: the chance of calling any difference when every side equals
//     the reference is at most alpha;
//   - the ratio intervals (side/reference, Moses' as in Compare) are each
//     at level 1 - (1 - o.Confidence)/m (Bonferroni), so that all of them
//     hold together with probability at least o.Confidence.
//
// The per-side summaries (median and interval) are benchstat's, each at
// o.Confidence alone. With two samples this is Compare.
func CompareN(samples []Sample, ref int, o Options) (MultiComparison, error) {
	if len(samples) < 2 {
		return MultiComparison{}, fmt.Errorf("%w: %d sides, need at least 2", ErrSides, len(samples))
	}
	if ref < 0 || ref >= len(samples) {
		return MultiComparison{}, fmt.Errorf("%w: reference %d is not one of the %d sides", ErrSides, ref, len(samples))
	}
	if err := o.Check(); err != nil {
		return MultiComparison{}, err
	}
	m := len(samples) - 1
	mc := MultiComparison{Reference: ref, Alpha: o.alpha(), Confidence: o.confidence(),
		RatioConfidence: 1 - (1-o.confidence())/float64(m)}
	for _, s := range samples {
		if len(s.Values) == 0 {
			return MultiComparison{}, fmt.Errorf("%s: %w", s.Label, ErrNoRuns)
		}
		mc.Labels = append(mc.Labels, s.Label)
		mc.Sides = append(mc.Sides, Summarize(s.Values, mc.Confidence))
	}
	var ps []*big.Rat
	for i, s := range samples {
		if i == ref {
			continue
		}
		c, err := Compare(samples[ref].Values, s.Values, Options{Alpha: mc.Alpha, Confidence: mc.Confidence})
		if err != nil {
			return MultiComparison{}, fmt.Errorf("%s vs %s: %w", s.Label, samples[ref].Label, err)
		}
		c.Ratio, c.RatioLo, c.RatioHi, c.RatioConfidence = RatioCI(samples[ref].Values, s.Values, mc.RatioConfidence)
		mc.Comparisons = append(mc.Comparisons, SideComparison{Side: i, Test: c})
		ps = append(ps, pRat(c.PExact, c.P))
	}
	alpha := LevelRat(mc.Alpha)
	for k, adj := range Holm(ps) {
		sc := &mc.Comparisons[k]
		sc.PHolm = adj
		sc.Significant = adj.Cmp(alpha) <= 0
		switch {
		case m == 1: // no adjustment: the test's own notes
			sc.Notes = sc.Test.Notes
		case sc.Significant != sc.Test.Significant:
			sc.Notes = append(sc.Notes, fmt.Sprintf("significant alone (p=%.3f <= alpha %v) but not after Holm's adjustment for %d comparisons (p=%.3f)",
				sc.Test.P, mc.Alpha, m, sc.PHolmFloat()))
		}
		if m > 1 {
			sc.Notes = append(sc.Notes, sc.Test.directionNote()...)
		}
	}
	return mc, nil
}

// Note is the one-line note on the multiple comparisons ("" with one
// comparison).
func (mc MultiComparison) Note() string {
	m := len(mc.Comparisons)
	if m < 2 {
		return ""
	}
	return fmt.Sprintf("multiple comparisons: %d sides compared with %s; p-values adjusted by Holm's method (family-wise alpha %v), ratio intervals simultaneous at %.4g%% (each at %.4g%%, Bonferroni)",
		m, mc.Labels[mc.Reference], mc.Alpha, 100*mc.Confidence, 100*mc.RatioConfidence)
}

// Verdicts says in words what each comparison shows, decided on the
// family's adjusted p-value: what names the figure, short the sides'
// short names (for the ratio "B/A"), less and more the words for a side
// below and above the reference ("faster", "slower").
func (mc MultiComparison) Verdicts(what string, short []string, less, more string) []string {
	var out []string
	for _, sc := range mc.Comparisons {
		w := Wording{What: what, Ratio: short[sc.Side] + "/" + short[mc.Reference],
			A: mc.Labels[mc.Reference], B: mc.Labels[sc.Side], Less: less, More: more}
		if len(mc.Comparisons) > 1 {
			w.Adjusted = fmt.Sprintf("Holm p=%.3f", sc.PHolmFloat())
		}
		c := sc.Test
		c.Significant = sc.Significant
		out = append(out, w.Verdict(c))
	}
	return out
}
