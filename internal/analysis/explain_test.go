// SPDX-License-Identifier: Apache-2.0

package analysis

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
)

// scaled are 8 runs around median v, spread by ±0.35%.
func scaled(v float64) []float64 {
	out := make([]float64, 8)
	for k := range out {
		out[k] = v * (1 + 0.001*float64(k-3))
	}
	return out
}

// TestAttribute: the attribution arithmetic on synthetic per-run times of
// the chain A -> T (A's register twin) -> M (min changed) -> B (EPP
// changed), with E (EPP changed alone) the fourth corner.
func TestAttribute(t *testing.T) {
	chain := recording.Explain{Chain: []int{0, 1, 2, 3}, Fields: [][]string{nil, {"min"}, {"epp"}}, Corners: []int{1, 2, 4, 3}}
	type verdicts struct {
		Steps       []string
		Interaction string
	}
	tests := []struct {
		name          string
		a, t, m, b, e float64
		want          verdicts
	}{
		{"min only", 10, 10, 12, 12, 10, verdicts{[]string{Equivalent, Causes, Equivalent}, Equivalent}},
		{"epp only", 10, 10, 10, 8, 8, verdicts{[]string{Equivalent, Equivalent, Causes}, Equivalent}},
		{"both, interacting", 10, 10, 12, 15, 10, verdicts{[]string{Equivalent, Causes, Causes}, Causes}},
		{"twins differ", 9, 10, 10, 10, 10, verdicts{[]string{Causes, Equivalent, Equivalent}, Equivalent}},
		{"within noise", 10, 10, 10.1, 10.1, 10, verdicts{[]string{Equivalent, Undecided, Undecided}, Undecided}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var samples []Sample
			for i, v := range []float64{tc.a, tc.t, tc.m, tc.b, tc.e} {
				s := scaled(v)
				if tc.name == "within noise" && i == 2 || tc.name == "within noise" && i == 3 {
					for k := range s { // a wider spread: 9.7 to 10.5
						s[k] = v + 0.1*float64(k-4)
					}
				}
				samples = append(samples, Sample{Label: string(rune('A' + i)), Values: s})
			}
			at, err := Attribute("time", "s", samples, chain, 0.02, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := verdicts{Interaction: at.Interaction.Verdict}
			sum := 0.0
			for _, s := range at.Steps {
				got.Steps = append(got.Steps, s.Verdict)
				sum += s.LogRatio
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("verdicts (-want +got):\n%s\n%+v", d, at)
			}
			if want := math.Log(medianOf(samples[3].Values) / medianOf(samples[0].Values)); math.Abs(sum-at.Total) > 1e-12 || math.Abs(at.Total-want) > 1e-12 {
				t.Errorf("steps add up to %v, total %v, want %v", sum, at.Total, want)
			}
			if at.Level != 1-0.05/4 || at.Interaction.Fields != [2]string{"min", "epp"} {
				t.Errorf("level %v (want %v), interaction of %v", at.Level, 1-0.05/4, at.Interaction.Fields)
			}
		})
	}
	// A bad chain or precision is an error, not a panic.
	for _, c := range []recording.Explain{{Chain: []int{0}}, {Chain: []int{0, 9}, Fields: [][]string{nil}}, {Chain: []int{0, 0}, Fields: [][]string{nil}},
		{Chain: []int{0, 1}, Fields: [][]string{nil}, Corners: []int{0, 1}}} {
		if _, err := Attribute("time", "s", []Sample{{"A", scaled(1)}, {"B", scaled(1)}}, c, 0.02, Options{}); err == nil {
			t.Errorf("chain %+v: no error", c)
		}
	}
}
