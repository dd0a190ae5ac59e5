// SPDX-License-Identifier: Apache-2.0

package analysis

import (
	"math"
	"math/rand/v2"
	"testing"
)

// simulate runs one adaptive experiment: run times lognormal around 100
// (A) and 100·ratio (B) with relative spread sd, looked at by decide after
// each pair of runs.
func simulate(rng *rand.Rand, rule StopRule, ratio, sd float64, decide func(a, b []float64) Decision) Decision {
	var a, b []float64
	for {
		a = append(a, 100*math.Exp(sd*rng.NormFloat64()))
		b = append(b, 100*ratio*math.Exp(sd*rng.NormFloat64()))
		if d := decide(a, b); d.Stop {
			return d
		}
	}
}

func ruleDecide(t *testing.T, r StopRule) func(a, b []float64) Decision {
	return func(a, b []float64) Decision {
		d, err := r.Decide(a, b)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
}

// TestStopRuleFalsePositives: with A = B the rule calls a difference in at
// most alpha of 2,000 experiments, where testing at alpha at every look
// does not.
func TestStopRuleFalsePositives(t *testing.T) {
	const experiments = 2000
	rule := StopRule{Alpha: 0.05, MaxRuns: 20}
	rng := rand.New(rand.NewPCG(42, 7))
	fp, naive := 0, 0
	for range experiments {
		if d := simulate(rng, rule, 1, 0.02, ruleDecide(t, rule)); d.Verdict == VerdictSignificant {
			fp++
		}
		// The same looks, each at the full alpha, stopping at the first
		// p <= alpha.
		d := simulate(rng, rule, 1, 0.02, func(a, b []float64) Decision {
			if len(a) < 4 {
				return Decision{}
			}
			c, _ := Compare(a, b, Options{Alpha: 0.05})
			if c.Significant {
				return Decision{Stop: true, Verdict: VerdictSignificant}
			}
			return Decision{Stop: len(a) >= rule.MaxRuns}
		})
		if d.Verdict == VerdictSignificant {
			naive++
		}
	}
	if rate := float64(fp) / experiments; rate > rule.Alpha {
		t.Errorf("false-positive rate %.4f > alpha %v over %d experiments", rate, rule.Alpha, experiments)
	}
	if rate := float64(naive) / experiments; rate <= rule.Alpha {
		t.Errorf("testing at alpha at every look gave %.4f; the simulation should show it above alpha", rate)
	}
	t.Logf("A = B: rule %d/%d significant, naive repeated testing %d/%d", fp, experiments, naive, experiments)
}

// TestStopRuleCoverage: where it stops, the ratio's interval holds the
// true ratio in at least 1 - alpha of the experiments.
func TestStopRuleCoverage(t *testing.T) {
	const experiments = 2000
	rule := StopRule{Alpha: 0.05, MaxRuns: 16}
	rng := rand.New(rand.NewPCG(3, 5))
	for _, ratio := range []float64{0.97, 0.78} {
		covered := 0
		for range experiments {
			c := simulate(rng, rule, ratio, 0.02, ruleDecide(t, rule)).Comparison
			if c.RatioLo <= ratio && ratio <= c.RatioHi {
				covered++
			}
		}
		rate := float64(covered) / experiments
		if rate < 1-rule.Alpha {
			t.Errorf("ratio %v: interval covered it in %.4f of experiments, below %v", ratio, rate, 1-rule.Alpha)
		}
		t.Logf("ratio %v: the interval at the stop covered it in %.4f of %d experiments", ratio, rate, experiments)
	}
}

func TestStopRuleRunsNeeded(t *testing.T) {
	rule := StopRule{MaxRuns: 30}
	rng := rand.New(rand.NewPCG(9, 9))
	// The seed report's effect: 258 s vs 330 s with about 2% noise.
	d := simulate(rng, rule, 258.0/330, 0.02, ruleDecide(t, rule))
	if d.N != 4 || d.Verdict != VerdictSignificant || d.Comparison.Ratio > 0.8 {
		t.Errorf("28%% effect: stopped at %d+%d with %s (ratio %.3f), want 4+4 significant", d.N, d.N, d.Verdict, d.Comparison.Ratio)
	}
	// A 2% effect is "smaller than" the default 5% precision; with 1%
	// precision it gets the runs it needs.
	d = simulate(rng, rule, 0.98, 0.01, ruleDecide(t, rule))
	if d.N != 4 || d.Verdict != VerdictEquivalent {
		t.Errorf("2%% effect, 1%% noise, 5%% precision: stopped at %d+%d with %s, want 4+4 equivalent", d.N, d.N, d.Verdict)
	}
	fine := StopRule{MaxRuns: 30, Precision: 0.01}
	d = simulate(rng, fine, 0.98, 0.01, ruleDecide(t, fine))
	if d.N <= 6 || d.Verdict != VerdictSignificant {
		t.Errorf("2%% effect, 1%% noise, 1%% precision: stopped at %d+%d with %s, want more runs and significant", d.N, d.N, d.Verdict)
	}
	t.Logf("2%% effect at 1%% precision: %d+%d runs, ratio %.4f [%.4f, %.4f]", d.N, d.N, d.Comparison.Ratio, d.Comparison.RatioLo, d.Comparison.RatioHi)
	d = simulate(rng, rule, 1, 0.01, ruleDecide(t, rule))
	if d.Verdict != VerdictEquivalent {
		t.Errorf("no effect, 1%% noise: %s after %d+%d, want shown smaller than 5%%", d.Verdict, d.N, d.N)
	}
}

func TestStopRuleCheck(t *testing.T) {
	for _, r := range []StopRule{{MaxRuns: 3}, {MaxRuns: 10, Alpha: 1.5}, {MaxRuns: 10, Precision: 2}, {MaxRuns: 10, MinRuns: 1}} {
		if r.Check() == nil {
			t.Errorf("%+v: no error", r)
		}
	}
	// The levels spent sum to alpha.
	r := StopRule{Alpha: 0.05, MaxRuns: 12}
	sum := 0.0
	for n := 1; n <= 20; n++ {
		sum += r.LookAlpha(n)
	}
	if math.Abs(sum-0.05) > 1e-12 {
		t.Errorf("levels spent sum to %v, want 0.05", sum)
	}
}
