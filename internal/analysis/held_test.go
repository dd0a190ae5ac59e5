// SPDX-License-Identifier: Apache-2.0

package analysis_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/testexp"
)

// heldRun is what TestSettingsHeld compares of a run.
type heldRun struct {
	Run          int
	Side         string
	Counted      bool
	Disturbances []string
}

// TestSettingsHeld: runs checked just before their command started
// (recording.Held) are held to the registers the check read, from the
// check on: a write traced before the first sample is judged against the
// check's value, not against that sample (which already holds the new
// value), and printed old -> new; an emulated write by its logged value
// before, with or without a check; a first sample that differs from the check with no write seen
// is a change too; what the check found changed is a disturbance at the
// start. A side disturbed in every run is an error wrapping ErrNotHeld
// naming it, not a verdict; with --keep-disturbed its runs count.
func TestSettingsHeld(t *testing.T) {
	sw := testexp.Request(0x04, 0x30, 0, 0x40) // powersave's request, written by the workload
	startB := "at its start CPU 0 energy_performance_preference had changed since the side was applied: performance -> balance_power"
	tests := []struct {
		name    string
		exp     func(*testexp.Experiment)
		keep    bool
		wantErr string // "": no error
		runs    []heldRun
	}{
		{name: "held", exp: func(*testexp.Experiment) {}, runs: []heldRun{
			{1, "A", true, nil}, {2, "B", true, nil}, {3, "B", true, nil}, {4, "A", true, nil},
			{5, "A", true, nil}, {6, "B", true, nil}, {7, "B", true, nil}, {8, "A", true, nil}}},
		{name: "A's workload switches the governor", exp: func(e *testexp.Experiment) { e.Switch = sw }, keep: true, runs: []heldRun{
			{1, "A", true, []string{"sh (pid 900) at +0.00s on CPU 0: IA32_HWP_REQUEST 0x3030 -> 0x40003004",
				"sampled change at +1.00s on CPU 0: IA32_HWP_REQUEST 0x3030 -> 0x40003004"}},
			{2, "B", true, nil}, {3, "B", true, nil},
			{4, "A", true, []string{"sh (pid 900) at +0.00s on CPU 0: IA32_HWP_REQUEST 0x3030 -> 0x40003004",
				"sampled change at +1.00s on CPU 0: IA32_HWP_REQUEST 0x3030 -> 0x40003004"}},
			{5, "A", true, []string{"sh (pid 900) at +0.00s on CPU 0: IA32_HWP_REQUEST 0x3030 -> 0x40003004",
				"sampled change at +1.00s on CPU 0: IA32_HWP_REQUEST 0x3030 -> 0x40003004"}},
			{6, "B", true, nil}, {7, "B", true, nil},
			{8, "A", true, []string{"sh (pid 900) at +0.00s on CPU 0: IA32_HWP_REQUEST 0x3030 -> 0x40003004",
				"sampled change at +1.00s on CPU 0: IA32_HWP_REQUEST 0x3030 -> 0x40003004"}}}},
		{name: "never held is an error", exp: func(e *testexp.Experiment) { e.Switch = sw },
			wantErr: "settings did not hold: side A (scaling_governor=performance) in none of its 4 runs (run 1: sh (pid 900) at +0.00s on CPU 0: IA32_HWP_REQUEST 0x3030 -> 0x40003004); no verdict (--keep-disturbed counts such runs)"},
		{name: "an emulated write's old value", exp: func(e *testexp.Experiment) { e.Switch, e.SwitchEmulated = sw, true },
			wantErr: "settings did not hold: side A (scaling_governor=performance) in none of its 4 runs (run 1: sh (pid 900) at +0.00s on CPU 0: IA32_HWP_REQUEST 0x3030 -> 0x40003004); no verdict (--keep-disturbed counts such runs)"},
		{name: "an emulated write without a check", exp: func(e *testexp.Experiment) { e.Switch, e.SwitchEmulated, e.Checked = sw, true, false }, keep: true,
			runs: []heldRun{
				{1, "A", true, []string{"sh (pid 900) at +0.00s on CPU 0: IA32_HWP_REQUEST 0x3030 -> 0x40003004"}},
				{2, "B", true, nil}, {3, "B", true, nil},
				{4, "A", true, []string{"sh (pid 900) at +0.00s on CPU 0: IA32_HWP_REQUEST 0x3030 -> 0x40003004"}},
				{5, "A", true, []string{"sh (pid 900) at +0.00s on CPU 0: IA32_HWP_REQUEST 0x3030 -> 0x40003004"}},
				{6, "B", true, nil}, {7, "B", true, nil},
				{8, "A", true, []string{"sh (pid 900) at +0.00s on CPU 0: IA32_HWP_REQUEST 0x3030 -> 0x40003004"}}}},
		{name: "B unheld at one start", exp: func(e *testexp.Experiment) { e.Unheld = []int{2} }, runs: []heldRun{
			{1, "A", true, nil}, {2, "B", true, nil}, {3, "B", false, []string{startB}}, {4, "A", true, nil},
			{5, "A", true, nil}, {6, "B", true, nil}, {7, "B", true, nil}, {8, "A", true, nil}}},
		{name: "B unheld at every start", exp: func(e *testexp.Experiment) { e.Unheld = []int{1, 2, 3, 4} },
			wantErr: "settings did not hold: side B (scaling_governor=powersave energy_performance_preference=performance) in none of its 4 runs (run 2: " + startB + "); no verdict (--keep-disturbed counts such runs)"},
		{name: "both never held", exp: func(e *testexp.Experiment) { e.Switch, e.Unheld = sw, []int{1, 2, 3, 4} },
			wantErr: "settings did not hold: side A (scaling_governor=performance) in none of its 4 runs (run 1: sh (pid 900) at +0.00s on CPU 0: IA32_HWP_REQUEST 0x3030 -> 0x40003004); " +
				"side B (scaling_governor=powersave energy_performance_preference=performance) in none of its 4 runs (run 2: " + startB + "); no verdict (--keep-disturbed counts such runs)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := testexp.Seed()
			e.Checked = true
			tc.exp(&e)
			rec, err := recording.Read(bytes.NewReader(e.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			res, err := analysis.Analyze([]analysis.Source{{Name: "exp.hwpr", Rec: rec}}, analysis.Options{}, tc.keep)
			if tc.wantErr != "" {
				if !errors.Is(err, analysis.ErrNotHeld) || err.Error() != tc.wantErr {
					t.Fatalf("error %v,\nwant %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []heldRun
			for _, r := range res.Runs {
				h := heldRun{Run: r.Run, Side: r.Side, Counted: r.Counted()}
				for _, d := range r.Disturbances {
					h.Disturbances = append(h.Disturbances, d.String())
				}
				got = append(got, h)
			}
			if d := cmp.Diff(tc.runs, got); d != "" {
				t.Errorf("runs (-want +got):\n%s", d)
			}
		})
	}
}
