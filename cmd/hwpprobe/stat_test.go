// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/reports/report"
)

// writeStatFiles writes name -> content into dir and returns the paths
// keyed by name.
func writeStatFiles(t *testing.T, files map[string]string) (string, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	paths := map[string]string{}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		paths[name] = p
	}
	return dir, paths
}

// The bug report's means, 330 s under performance and 258 s under
// powersave:epp=performance, three runs each: illustrative values
// (docs/stat.md).
const (
	seedA = "329\n330\n331\n"
	seedB = "257\n258\n259\n"
)

// TestStatSeed runs the built binary on the seed numbers: benchstat's
// "~ (p=0.100 n=3)", its footnotes, how many runs would reach alpha, and at
// --alpha 0.1 the exact p = 2/20 counted significant with a note.
func TestStatSeed(t *testing.T) {
	dir, _ := writeStatFiles(t, map[string]string{"a.txt": seedA, "b.txt": seedB,
		"bench-a.txt": "goos: linux\nBenchmarkBuild-12 1 329 sec/op\nBenchmarkBuild-12 1 330 sec/op\nBenchmarkBuild-12 1 331 sec/op\nPASS\n",
		"bench-b.txt": "BenchmarkBuild-12 1 257 sec/op\nBenchmarkBuild-12 1 258 sec/op\nBenchmarkBuild-12 1 259 sec/op\n"})
	tests := []struct {
		name  string
		args  []string
		lines []string // each a whole line of stdout
	}{
		{"seed", []string{"a.txt", "b.txt"}, []string{
			"B (b.txt)  258 ± ∞ ¹          ~ (p=0.100 n=3) ²  ratio B/A 0.782 [0.000, ∞] at 100%",
			"¹ need >= 6 samples for confidence interval at level 0.95",
			"² need >= 4 samples to detect a difference at alpha level 0.05",
			"runs needed: B (b.txt) vs A (a.txt): with the same separation (every value of B below every value of A), 4 runs per side would give p = 2/70 = 0.0285714 <= alpha 0.05",
			"verdict: ~ no significant difference in value between A (a.txt) and B (b.txt) (p=0.100 n=3; ratio B/A 0.782, 100% interval [0.000, +Inf])",
		}},
		{"alpha 0.1", []string{"--alpha", "0.1", "a.txt", "b.txt"}, []string{
			"B (b.txt)  258 ± ∞ ¹          -21.82% (p=0.100 n=3)  ratio B/A 0.782 [0.000, ∞] at 100%",
			"note: B (b.txt): p = 2/20 = 0.1 exactly, <= alpha 0.1: significant; benchstat compares its floating-point p (0.10000000000000002) with alpha and would print ~",
			"verdict: B (b.txt) is 21.8% faster than A (a.txt) (p=0.100 n=3; ratio B/A 0.782, 100% interval [0.000, +Inf])",
		}},
		{"reference B", []string{"--reference", "b.txt", "a.txt", "b.txt"}, []string{
			"A (a.txt)  330 ± ∞ ¹          ~ (p=0.100 n=3) ²  ratio A/B 1.279 [0.000, ∞] at 100%",
			"verdict: ~ no significant difference in value between B (b.txt) and A (a.txt) (p=0.100 n=3; ratio A/B 1.279, 100% interval [0.000, +Inf])",
		}},
		{"benchmark lines", []string{"bench-a.txt", "bench-b.txt"}, []string{
			"BenchmarkBuild (sec/op)  median ± CI        vs A",
			"verdict: ~ no significant difference in BenchmarkBuild between A (bench-a.txt) and B (bench-b.txt) (p=0.100 n=3; ratio B/A 0.782, 100% interval [0.000, +Inf])",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"stat"}
			for _, a := range tc.args {
				if strings.HasSuffix(a, ".txt") {
					a = filepath.Join(dir, a)
				}
				args = append(args, a)
			}
			stdout, stderr, code := runBin(t, args...)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			got := strings.Split(stdout, "\n")
			var missing []string
			for _, l := range tc.lines {
				found := false
				for _, g := range got {
					found = found || g == l
				}
				if !found {
					missing = append(missing, l)
				}
			}
			if d := cmp.Diff([]string(nil), missing); d != "" {
				t.Errorf("lines missing from the output (-none +missing):\n%s\noutput:\n%s", d, stdout)
			}
		})
	}
}

// TestStatJSONFourSides: with four files the JSON names the Holm
// adjustment, and each comparison carries diff's figure fields.
func TestStatJSONFourSides(t *testing.T) {
	dir, _ := writeStatFiles(t, map[string]string{"a.txt": "330\n331\n329\n332\n", "b.txt": "258\n259\n257\n260\n",
		"c.txt": "258\n259\n257\n260\n", "d.txt": "329.5\n331.5\n330.5\n328\n"})
	var args []string
	for _, n := range []string{"a.txt", "b.txt", "c.txt", "d.txt"} {
		args = append(args, filepath.Join(dir, n))
	}
	stdout, stderr, code := runBin(t, append([]string{"stat", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	type comparison struct {
		Side             string  `json:"side"`
		PExact           string  `json:"p_exact"`
		PHolm            float64 `json:"p_holm"`
		Significant      bool    `json:"significant"`
		SignificantAlone bool    `json:"significant_alone"`
		Delta            string  `json:"delta"`
	}
	var got struct {
		Schema      string       `json:"schema"`
		Adjustment  string       `json:"adjustment"`
		Comparisons []comparison `json:"comparisons"`
	}
	checkSchema(t, report.StatSchema, []byte(stdout))
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	// 4+4 completely separated: p = 2/70, Holm 3·2/70 = 0.0857 > 0.05.
	want := []comparison{
		{"B (b.txt)", "2/70", 6.0 / 70, false, true, "~"},
		{"C (c.txt)", "2/70", 6.0 / 70, false, true, "~"},
		{"D (d.txt)", "48/70", 48.0 / 70, false, false, "~"},
	}
	if d := cmp.Diff(want, got.Comparisons); d != "" || got.Schema != "hwpprobe-stat/1" || got.Adjustment != "holm" {
		t.Errorf("schema %q adjustment %q, comparisons (-want +got):\n%s", got.Schema, got.Adjustment, d)
	}
}

// TestStatBadInput: every bad input is one line on stderr, exit 2,
// nothing on stdout.
func TestStatBadInput(t *testing.T) {
	dir, p := writeStatFiles(t, map[string]string{"a.txt": seedA, "b.txt": seedB, "one.txt": "330\n",
		"word.txt": "329\nfast\n", "neg.txt": "1\n-2\n", "nan.txt": "1\nNaN\n", "inf.txt": "1\n+Inf\n",
		"mixed.txt": "BenchmarkX 1 3 sec/op\nBenchmarkX 1 4 B/op\n", "plain-bench.txt": "BenchmarkX 1 3 sec/op\n4\n",
		"bench.txt": "BenchmarkX 1 3 sec/op\nBenchmarkX 1 4 sec/op\n"})
	a, b := p["a.txt"], p["b.txt"]
	nine := []string{"stat"}
	for range 9 {
		f, err := os.CreateTemp(dir, "n*.txt")
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(seedA)
		f.Close()
		nine = append(nine, f.Name())
	}
	tests := []struct {
		name string
		args []string
		want string // in the message
	}{
		{"one value", []string{"stat", a, p["one.txt"]}, "1 values, need at least 2 per side"},
		{"not a number", []string{"stat", a, p["word.txt"]}, `word.txt:2: "fast": not a number`},
		{"negative", []string{"stat", p["neg.txt"], b}, "neg.txt:2: -2: values must be finite and not negative"},
		{"NaN", []string{"stat", a, p["nan.txt"]}, "nan.txt:2: NaN: values must be finite"},
		{"Inf", []string{"stat", a, p["inf.txt"]}, "inf.txt:2: +Inf: values must be finite"},
		{"two units in a file", []string{"stat", a, p["mixed.txt"]}, "one benchmark and unit per file"},
		{"plain among benchmark lines", []string{"stat", a, p["plain-bench.txt"]}, "a plain number among benchmark lines"},
		{"units differ", []string{"stat", a, p["bench.txt"]}, "compare one figure"},
		{"nine files", nine, "stat compares 2 to 8 files, got 9"},
		{"one file", []string{"stat", a}, "stat compares 2 to 8 files, got 1"},
		{"same file twice", []string{"stat", a, b, a}, "are the same file"},
		{"same file by another name", []string{"stat", a, filepath.Join(dir, ".", "a.txt")}, "are the same file"},
		{"missing file", []string{"stat", a, filepath.Join(dir, "none.txt")}, "no such file or directory"},
		{"reference not a file given", []string{"stat", "--reference", p["one.txt"], a, b}, "is not one of the files"},
		{"alpha out of range", []string{"stat", "--alpha", "1", a, b}, "alpha"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runBin(t, tc.args...)
			if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2, one line with %q", code, stdout, stderr, tc.want)
			}
		})
	}
}
