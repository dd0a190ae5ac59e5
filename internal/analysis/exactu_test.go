// SPDX-License-Identifier: Apache-2.0

package analysis

import (
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/aclements/go-moremath/stats"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestExactPMatchesMoremath checks the counted p-value against the float
// that benchstat's U test (go-moremath) computes from its own exact
// distribution, with and without ties, up to the exact limits.
func TestExactPMatchesMoremath(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 7))
	draw := func(n int, shift float64, levels int) []float64 {
		v := make([]float64, n)
		for i := range v {
			if levels > 0 {
				v[i] = float64(rng.IntN(levels)) + shift
			} else {
				v[i] = rng.NormFloat64() + shift
			}
		}
		return v
	}
	tests := []struct {
		name   string
		n1, n2 int
		shift  float64
		levels int // > 0: values drawn from that many integers (ties)
	}{
		{"3+3", 3, 3, 0.5, 0},
		{"4+7 shifted", 4, 7, 1, 0},
		{"12+12", 12, 12, 0.3, 0},
		{"50+50", 50, 50, 0.2, 0},
		{"50+3", 50, 3, 1, 0},
		{"5+5 ties", 5, 5, 1, 4},
		{"10+8 ties", 10, 8, 0, 5},
		{"25+25 ties", 25, 25, 1, 12},
		{"20+3 ties", 20, 3, 2, 6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for range 20 {
				a, b := draw(tc.n1, 0, tc.levels), draw(tc.n2, tc.shift, tc.levels)
				res, err := stats.MannWhitneyUTest(a, b, stats.LocationDiffers)
				if err != nil {
					continue // every value equal
				}
				ep := exactP(a, b)
				if ep == nil {
					t.Fatalf("no exact p for %v %v", a, b)
				}
				got, _ := ep.Rat().Float64()
				if d := cmp.Diff(res.P, got, cmpopts.EquateApprox(1e-9, 0)); d != "" {
					t.Errorf("p of %v vs %v (-moremath +counted):\n%s", a, b, d)
				}
			}
		})
	}
}

// TestExactPLimits: where benchstat approximates, there is no exact p.
func TestExactPLimits(t *testing.T) {
	seq := func(n int, from float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = from + float64(i)
		}
		return v
	}
	tests := []struct {
		name  string
		a, b  []float64
		exact bool
	}{
		{"50+50 no ties", seq(50, 0), seq(50, 0.5), true},
		{"51+3 no ties", seq(51, 0), seq(3, 0.5), false},
		{"25+25 ties", seq(25, 0), seq(25, 0), true},
		{"26+5 ties", seq(26, 0), seq(5, 0), false},
		{"all equal", []float64{1, 1}, []float64{1, 1, 1}, false},
	}
	for _, tc := range tests {
		if got := exactP(tc.a, tc.b) != nil; got != tc.exact {
			t.Errorf("%s: exact %v, want %v", tc.name, got, tc.exact)
		}
	}
}

// TestUCountNoTies compares the Gaussian-binomial count with the tie-group
// counting and with the brute-force distribution.
func TestUCountNoTies(t *testing.T) {
	for _, sz := range [][2]int{{1, 1}, {2, 3}, {3, 3}, {4, 4}, {5, 3}, {6, 7}} {
		n, m := sz[0], sz[1]
		ones := slices.Repeat([]int{1}, n+m)
		pmf := uBrute(n, m)
		total := new(big.Int).Binomial(int64(n+m), int64(n))
		acc := 0.0
		for u := 0; u <= n*m; u++ {
			acc += pmf[u]
			got, groups := uCountNoTies(n, m, u).big(), uCountBelow(ones, n, 2*u).big()
			f, _ := new(big.Rat).SetFrac(got, total).Float64()
			if got.Cmp(groups) != 0 || cmp.Diff(acc, f, cmpopts.EquateApprox(0, 1e-12)) != "" {
				t.Errorf("%d+%d U<=%d: q-binomial %v, tie groups %v, brute %v of %v", n, m, u, got, groups, acc, total)
			}
		}
	}
}

// TestSignificantOnExactP: 3+3 completely separated runs give p = 2/20,
// exactly 0.1; benchstat's float is 0.10000000000000002 and prints "~" at
// --alpha 0.1. The decision on the exact p calls it significant, with a
// note; at the seed's alpha 0.05 nothing changes and nothing is noted.
func TestSignificantOnExactP(t *testing.T) {
	a, b := []float64{329, 330, 331}, []float64{257, 258, 259}
	tests := []struct {
		name      string
		alpha     float64
		sig       bool
		delta     string
		exactNote bool
	}{
		{"alpha 0.1: p equals alpha", 0.1, true, "-21.82%", true},
		{"alpha 0.05", 0.05, false, "~", false},
		{"alpha 0.3", 0.3, true, "-21.82%", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Compare(a, b, Options{Alpha: tc.alpha})
			if err != nil {
				t.Fatal(err)
			}
			type got struct {
				Sig       bool
				Delta, P  string
				ExactNote bool
			}
			want := got{tc.sig, tc.delta, "2/20 = 0.1", tc.exactNote}
			g := got{c.Significant, c.Delta(), c.PExact.String(), len(c.Notes) > 0}
			if d := cmp.Diff(want, g); d != "" {
				t.Errorf("(-want +got):\n%s\nnotes %q", d, c.Notes)
			}
		})
	}
}

// TestDirectionNote: the Hodges-Lehmann ratio and the medians' change can
// point opposite ways on overlapping runs; then, and only then, a note.
func TestDirectionNote(t *testing.T) {
	tests := []struct {
		name string
		a, b []float64
		note bool
	}{
		// Medians 10 and 11 (B larger), but most b/a ratios are below 1:
		// ratios of b = {1, 11, 11.5} to a = {2, 10, 30}.
		{"opposite", []float64{2, 10, 30}, []float64{1, 11, 11.5}, true},
		{"same way", []float64{10, 11, 12}, []float64{12, 13, 14}, false},
		{"equal medians", []float64{1, 2, 3}, []float64{1, 2, 3}, false},
	}
	for _, tc := range tests {
		c, err := Compare(tc.a, tc.b, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(c.directionNote()) > 0; got != tc.note {
			t.Errorf("%s: ratio %v, medians %v -> %v: note %v, want %v", tc.name, c.Ratio, c.A.Median, c.B.Median, got, tc.note)
		}
	}
}

func TestRunsToReach(t *testing.T) {
	tests := []struct {
		name  string
		a, b  []float64
		alpha float64
		want  RunsNeeded
	}{
		// Completely separated: p = 2/C(2n, n); 2/20 > 0.05, 2/70 < 0.05.
		{"seed 3+3", []float64{329, 330, 331}, []float64{257, 258, 259}, 0.05,
			RunsNeeded{Pairs: 0, N: 4, P: ExactP{big.NewInt(2), big.NewInt(70)}}},
		// 2/252 = 0.0079 > 0.005 >= 2/924.
		{"alpha 0.005", []float64{1, 2}, []float64{3, 4}, 0.005,
			RunsNeeded{Pairs: 0, N: 6, P: ExactP{big.NewInt(2), big.NewInt(924)}}},
		// One pair of nine out of order (1/9): at 4+4, U <= 16/9 → 1:
		// 2·2/70 = 0.057 > 0.05; at 5+5, U <= 25/9 → 2: 2·(1+1+2)/252 =
		// 8/252 = 0.032.
		{"one pair out of order", []float64{10, 11, 13}, []float64{12, 14, 15}, 0.05,
			RunsNeeded{Pairs: 1.0 / 9, N: 5, P: ExactP{big.NewInt(8), big.NewInt(252)}}},
	}
	for _, tc := range tests {
		got, ok := RunsToReach(tc.a, tc.b, tc.alpha)
		if !ok {
			t.Fatalf("%s: no answer", tc.name)
		}
		if d := cmp.Diff(tc.want, got, cmp.Comparer(func(x, y *big.Int) bool { return x.Cmp(y) == 0 }), cmpopts.EquateApprox(0, 1e-12)); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, d)
		}
	}
	if _, ok := RunsToReach([]float64{1, 2}, []float64{1, 2}, 0.05); ok {
		t.Errorf("equal U statistics: an answer")
	}
}
