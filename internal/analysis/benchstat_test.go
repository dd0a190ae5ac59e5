// SPDX-License-Identifier: Apache-2.0

package analysis

import (
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/testbin"
)

// benchstatRow is what benchstat -format csv prints for one benchmark of
// two files: both medians, both intervals, the delta and the p-value.
type benchstatRow struct {
	MedianA, CIA, MedianB, CIB, Delta, P string
}

func writeBench(t *testing.T, path string, values []float64) {
	t.Helper()
	var b strings.Builder
	for _, v := range values {
		fmt.Fprintf(&b, "BenchmarkRun 1 %v sec/op\n", v)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runBenchstat runs the real benchstat (the version go.mod requires, built
// here) on two files holding a and b.
func runBenchstat(t *testing.T, bin string, a, b []float64, alpha, conf float64) benchstatRow {
	t.Helper()
	r := runBenchstatN(t, bin, [][]float64{a, b}, alpha, conf)
	return benchstatRow{r[1], r[2], r[3], r[4], r[5], r[6]}
}

// runBenchstatN runs the real benchstat on one file per sample (named A,
// B, C, ...) and returns its CSV row of the benchmark: the name, the first
// file's median and interval, then per other file its median, interval,
// delta and p-value.
func runBenchstatN(t *testing.T, bin string, samples [][]float64, alpha, conf float64) []string {
	t.Helper()
	dir := t.TempDir()
	args := []string{"-format", "csv", fmt.Sprintf("-alpha=%v", alpha), fmt.Sprintf("-confidence=%v", conf)}
	for i, v := range samples {
		f := filepath.Join(dir, string(rune('A'+i)))
		writeBench(t, f, v)
		args = append(args, f)
	}
	out, err := exec.CommandContext(t.Context(), bin, args...).Output()
	if err != nil {
		t.Fatalf("benchstat: %v\n%s", err, out)
	}
	recs, err := csv.NewReader(strings.NewReader(string(out))).ReadAll()
	if err != nil && !strings.Contains(err.Error(), "wrong number of fields") {
		t.Fatalf("benchstat csv: %v\n%s", err, out)
	}
	for _, r := range recs {
		if len(r) >= 3+4*(len(samples)-1) && r[0] == "Run" {
			return r
		}
	}
	t.Fatalf("no Run row in benchstat output:\n%s", out)
	return nil
}

func buildBenchstat(t *testing.T) string {
	t.Helper()
	bin, err := testbin.Build(t.TempDir(), "golang.org/x/perf/cmd/benchstat")
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestMatchesBenchstat(t *testing.T) {
	bin := buildBenchstat(t)
	rng := rand.New(rand.NewPCG(13, 1))
	noisy := func(n int, center, spread float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(int((center+spread*rng.NormFloat64())*100)) / 100
		}
		return v
	}
	tests := []struct {
		name        string
		a, b        []float64
		alpha, conf float64
	}{
		// The report that started the project: benchstat prints
		// "334.4 ± ∞   257.9 ± ∞   ~ (p=0.100 n=3)".
		{"seed", []float64{320.96, 335.10, 334.36}, []float64{257.89, 258.30, 257.94}, 0.05, 0.95},
		{"4+4 separated", []float64{330, 331, 329, 332}, []float64{258, 259, 257, 260}, 0.05, 0.95},
		{"6+6 overlapping", noisy(6, 100, 3), noisy(6, 101, 3), 0.05, 0.95},
		{"10+8 shifted", noisy(10, 100, 2), noisy(8, 95, 2), 0.05, 0.95},
		{"ties", []float64{10, 10, 11, 12, 12, 13}, []float64{10, 11, 11, 12, 14, 14}, 0.05, 0.95},
		{"20+20 alpha 0.01 conf 0.99", noisy(20, 50, 1), noisy(20, 50.8, 1), 0.01, 0.99},
		{"equal", []float64{5, 5, 5, 5}, []float64{5, 5, 5, 5}, 0.05, 0.95},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := runBenchstat(t, bin, tc.a, tc.b, tc.alpha, tc.conf)
			c, err := Compare(tc.a, tc.b, Options{Alpha: tc.alpha, Confidence: tc.conf})
			if err != nil {
				t.Fatal(err)
			}
			got := benchstatRow{
				MedianA: fmt.Sprint(c.A.Median), CIA: c.A.PctRange(),
				MedianB: fmt.Sprint(c.B.Median), CIB: c.B.PctRange(),
				Delta: c.Delta(), P: c.PString(),
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("benchstat (-) vs analysis (+):\n%s", d)
			}
		})
	}
}

// TestCompareNMatchesBenchstat: with four sides, every side's median and
// interval and every comparison's delta and p-value (the unadjusted test)
// are the ones the real benchstat prints for the same four files, the
// first the reference.
func TestCompareNMatchesBenchstat(t *testing.T) {
	bin := buildBenchstat(t)
	tests := []struct {
		name        string
		samples     [][]float64
		alpha, conf float64
	}{
		{"seed and more", [][]float64{{329, 330, 331}, {257, 258, 259}, {320, 321, 322, 323, 324}, {330, 331, 329}}, 0.05, 0.95},
		{"6 runs, ties", [][]float64{{10, 10, 11, 12, 12, 13}, {10, 11, 11, 12, 14, 14}, {8, 9, 9, 10, 8, 9}, {13, 14, 15, 16, 17, 18}}, 0.05, 0.95},
		{"alpha 0.01 conf 0.9", [][]float64{{5.1, 5.2, 5.0, 5.3, 5.2, 5.1, 5.0}, {4.1, 4.0, 4.2, 4.3, 4.1, 4.0, 4.2}, {5.0, 5.4, 5.2, 5.1}, {6, 6.1, 6.2, 6.3, 6.4, 6.5, 6.6, 6.7}}, 0.01, 0.9},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := runBenchstatN(t, bin, tc.samples, tc.alpha, tc.conf)
			var samples []Sample
			for i, v := range tc.samples {
				samples = append(samples, Sample{Label: string(rune('A' + i)), Values: v})
			}
			mc, err := CompareN(samples, 0, Options{Alpha: tc.alpha, Confidence: tc.conf})
			if err != nil {
				t.Fatal(err)
			}
			got := []string{"Run", fmt.Sprint(mc.Sides[0].Median), mc.Sides[0].PctRange()}
			for _, sc := range mc.Comparisons {
				s := mc.Sides[sc.Side]
				got = append(got, fmt.Sprint(s.Median), s.PctRange(), sc.Test.Delta(), sc.Test.PString())
			}
			if d := cmp.Diff(want[:len(got)], got); d != "" {
				t.Errorf("benchstat (-) vs CompareN (+):\n%s", d)
			}
		})
	}
}
