// SPDX-License-Identifier: Apache-2.0

package analysis

import (
	"errors"
	"math/big"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func rats(t *testing.T, s ...string) []*big.Rat {
	t.Helper()
	out := make([]*big.Rat, len(s))
	for i, x := range s {
		r, ok := new(big.Rat).SetString(x)
		if !ok {
			t.Fatalf("bad rational %q", x)
		}
		out[i] = r
	}
	return out
}

func ratStrings(r []*big.Rat) []string {
	out := make([]string, len(r))
	for i, x := range r {
		out[i] = x.RatString()
	}
	return out
}

// TestHolm checks Holm's adjusted p-values against the arithmetic done by
// hand: sort ascending, multiply the i-th smallest (from 1) by m - i + 1,
// cap at 1, and carry the running maximum so that the adjusted values keep
// the order of the raw ones.
func TestHolm(t *testing.T) {
	tests := []struct {
		name string
		p    []string
		want []string
	}{
		// m = 4; sorted 1/100 (#0), 3/100 (#2), 4/100 (#1), 20/100 (#3):
		//   #0: 4·1/100  = 4/100
		//   #2: 3·3/100  = 9/100,  max(4/100, 9/100)  = 9/100
		//   #1: 2·4/100  = 8/100,  max(9/100, 8/100)  = 9/100
		//   #3: 1·20/100 = 20/100, max(9/100, 20/100) = 1/5
		{"four", []string{"1/100", "4/100", "3/100", "20/100"}, []string{"1/25", "9/100", "9/100", "1/5"}},
		// m = 3, the U test's 4+4 minimum twice and 1/2:
		//   3·2/70 = 6/70 = 3/35; 2·2/70 = 4/70, max = 3/35; 1·1/2 = 1/2.
		{"exact U p-values", []string{"2/70", "1/2", "2/70"}, []string{"3/35", "1/2", "3/35"}},
		// m = 2: 2·3/10 = 3/5; 1·1/2 = 1/2, max = 3/5.
		{"running maximum", []string{"1/2", "3/10"}, []string{"3/5", "3/5"}},
		// m = 2: 2·6/10 = 6/5, capped at 1; 7/10, max = 1.
		{"capped at 1", []string{"6/10", "7/10"}, []string{"1", "1"}},
		// m = 3: 3·1/60 = 1/20 exactly: alpha 0.05 is reached, not passed.
		{"lands on alpha", []string{"1/60", "1/30", "1/10"}, []string{"1/20", "1/15", "1/10"}},
		{"one test", []string{"1/7"}, []string{"1/7"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ratStrings(Holm(rats(t, tc.p...)))
			want := ratStrings(rats(t, tc.want...))
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("Holm(%v) (-want +got):\n%s", tc.p, d)
			}
		})
	}
}

// TestCompareNFamily: the decisions on the Holm-adjusted p-values, the
// notes where they differ from the unadjusted tests, and the Bonferroni
// level of the ratio intervals.
func TestCompareNFamily(t *testing.T) {
	ref := []float64{330, 331, 329, 332}
	sep := []float64{258, 259, 257, 260}        // 4+4 separated: p = 2/70
	over := []float64{329.5, 331.5, 330.5, 328} // overlapping
	type side struct {
		PHolm      string
		Test, Holm bool
		Notes      int
	}
	tests := []struct {
		name     string
		samples  [][]float64
		alpha    float64
		want     []side
		ratioLvl float64
	}{
		// Two separated sides and one overlapping (p = 48/70 = 24/35, the
		// largest, times 1): 3·2/70 = 3/35 = 0.086 >
		// 0.05, so neither separated side is significant in the family,
		// though each is alone.
		{"three sides, alpha 0.05", [][]float64{ref, sep, sep, over}, 0.05,
			[]side{{"3/35", true, false, 1}, {"3/35", true, false, 1}, {"24/35", false, false, 0}}, 1 - 0.05/3},
		// At alpha 0.1 both remain: 3/35 <= 1/10.
		{"three sides, alpha 0.1", [][]float64{ref, sep, sep, over}, 0.1,
			[]side{{"3/35", true, true, 0}, {"3/35", true, true, 0}, {"24/35", false, false, 0}}, 1 - 0.05/3},
		// One comparison: no adjustment.
		{"two sides", [][]float64{ref, sep}, 0.05, []side{{"1/35", true, true, 0}}, 0.95},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var samples []Sample
			for i, v := range tc.samples {
				samples = append(samples, Sample{Label: string(rune('A' + i)), Values: v})
			}
			mc, err := CompareN(samples, 0, Options{Alpha: tc.alpha})
			if err != nil {
				t.Fatal(err)
			}
			var got []side
			for _, sc := range mc.Comparisons {
				got = append(got, side{sc.PHolm.RatString(), sc.Test.Significant, sc.Significant, len(sc.Notes)})
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.ratioLvl, mc.RatioConfidence); d != "" {
				t.Errorf("ratio level (-want +got):\n%s", d)
			}
		})
	}
}

func TestCompareNErrors(t *testing.T) {
	one := []Sample{{"A", []float64{1, 2}}}
	two := []Sample{{"A", []float64{1, 2}}, {"B", []float64{3, 4}}}
	for _, tc := range []struct {
		name    string
		samples []Sample
		ref     int
		want    error
	}{
		{"one side", one, 0, ErrSides},
		{"reference out of range", two, 2, ErrSides},
		{"empty side", []Sample{{"A", []float64{1}}, {"B", nil}}, 0, ErrNoRuns},
	} {
		if _, err := CompareN(tc.samples, tc.ref, Options{}); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}
