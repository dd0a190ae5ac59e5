// SPDX-License-Identifier: Apache-2.0

package analysis_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/testexp"
)

// TestReadSourcesStreams: ReadSources scans the files batch by batch,
// keeping no samples or trace events, and the analysis of what it
// gathered equals the analysis of the same files read whole, for each
// kind of fixture: an experiment with a warm-up, a disturbed one (its
// trace batch before or after its samples), one whose side changed
// between runs, one cut short, and two recordings.
func TestReadSourcesStreams(t *testing.T) {
	seed := func(f func(*testexp.Experiment)) []testexp.Experiment {
		e := testexp.Seed()
		f(&e)
		return []testexp.Experiment{e}
	}
	tests := []struct {
		name  string
		exps  []testexp.Experiment
		cut   int    // bytes cut off the end of the first file
		wantX string // a run left out with this reason
	}{
		{name: "warm-up", exps: seed(func(e *testexp.Experiment) { e.Warmup = true })},
		{name: "disturbed", exps: seed(func(e *testexp.Experiment) { e.Disturb = true }), wantX: "thermald (pid 777)"},
		{name: "trace first", exps: seed(func(e *testexp.Experiment) { e.Disturb, e.TraceFirst = true, true }),
			wantX: "IA32_HWP_REQUEST 0x10003004 -> 0x80003004"},
		{name: "misheld", exps: seed(func(e *testexp.Experiment) { e.Misheld = true }), wantX: "at its start CPU 0"},
		{name: "checked", exps: seed(func(e *testexp.Experiment) { e.Checked, e.Unheld = true, []int{2} }),
			wantX: "energy_performance_preference had changed since the side was applied: performance -> balance_power"},
		{name: "cut", exps: seed(func(e *testexp.Experiment) { e.CutAfter = 6 }), cut: 3},
		{name: "two recordings", exps: append(seed(func(e *testexp.Experiment) { e.Record = true }),
			seed(func(e *testexp.Experiment) { e.Record, e.A = true, e.B })...)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var paths []string
			var whole []analysis.Source
			for i, e := range tc.exps {
				b := e.Bytes()
				if i == 0 {
					b = b[:len(b)-tc.cut]
				}
				p := filepath.Join(t.TempDir(), string(rune('a'+i))+".hwpr")
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
				rec, err := recording.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				paths = append(paths, p)
				whole = append(whole, analysis.Source{Name: filepath.Base(p), Rec: rec})
			}
			want, err := analysis.Analyze(whole, analysis.Options{}, false)
			if err != nil {
				t.Fatal(err)
			}
			srcs, _ := analysis.ReadSources(paths)
			for _, s := range srcs {
				for _, r := range s.Rec.Runs {
					if len(r.Samples) > 0 || len(r.Trace) > 0 {
						t.Fatalf("%s run %d kept %d samples, %d trace events", s.Name, r.Start.Run, len(r.Samples), len(r.Trace))
					}
				}
			}
			got, err := analysis.Analyze(srcs, analysis.Options{}, false)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got, cmpopts.EquateNaNs(), cmpopts.IgnoreUnexported(analysis.RunResult{}), cmp.AllowUnexported(analysis.RunFacts{})); d != "" {
				t.Errorf("streamed analysis differs from the whole read (-whole +streamed):\n%s", d)
			}
			if got.Verdict() != want.Verdict() {
				t.Errorf("verdict %q, want %q", got.Verdict(), want.Verdict())
			}
			var excluded []string
			for _, r := range got.Runs {
				if !r.Counted() && !r.Warmup {
					excluded = append(excluded, r.Excluded)
				}
			}
			if tc.wantX != "" && (len(excluded) != 1 || !strings.Contains(excluded[0], tc.wantX)) {
				t.Errorf("left out %q, want one run: %q", excluded, tc.wantX)
			}
		})
	}
}
