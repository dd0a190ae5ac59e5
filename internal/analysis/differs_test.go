// SPDX-License-Identifier: Apache-2.0

package analysis

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
)

// TestLevelKHz: the kHz per HWP level is the unit whose Highest x unit,
// rounded down to 100 MHz, is cpuinfo_max_freq: on the Core Ultra 7
// 165U (docs/emulator.md: P-cores Highest 62 at 80 MHz a level, 4.9 GHz;
// E-cores 38 at 100 MHz, 3.8 GHz) and a machine whose cpuinfo_max_freq
// fits no unit (turbo off: Guaranteed 21 x 80 MHz = 1.6 GHz).
func TestLevelKHz(t *testing.T) {
	for _, tc := range []struct {
		highest uint8
		maxKHz  int64
		want    int64
	}{{62, 4900000, 80000}, {38, 3800000, 100000}, {21, 2100000, 100000}, {62, 1600000, 0}, {0, 4900000, 0}} {
		if got := LevelKHz(tc.highest, tc.maxKHz); got != tc.want {
			t.Errorf("LevelKHz(%d, %d) = %d, want %d", tc.highest, tc.maxKHz, got, tc.want)
		}
	}
	ct := TypeEvidence{LevelKHz: 80000}
	got := []string{ct.LevelText("min", 62), ct.LevelText("desired", 0), ct.LevelText("epp", 128), TypeEvidence{}.LevelText("max", 62)}
	if d := cmp.Diff([]string{"62 (4960 MHz)", "0", "128", "62"}, got); d != "" {
		t.Errorf("LevelText (-want +got):\n%s", d)
	}
}

// TestDifferencesOrder: what differs lists the settings, then the
// register fields, then the significant figures, each group largest
// first; a figure not significant is counted, not listed; a figure whose
// ratio and medians point opposite ways carries the note.
func TestDifferencesOrder(t *testing.T) {
	sig := func(a, b, ratio float64, s bool) Figure {
		return Figure{Unit: "s", Comparison: Comparison{A: Summary{Median: a, N: 6}, B: Summary{Median: b, N: 6}, Ratio: ratio, Significant: s}}
	}
	res := &Result{
		Sides: []SideResult{
			{Label: "A", Settings: []recording.Setting{{Name: "governor", Value: "performance"}, {Name: "epb", Value: "0"}},
				CoreTypes: []TypeEvidence{{Type: "P", LevelKHz: 80000, Held: Fields{"min": {{Value: 62, Count: 9}}, "epp": {{Value: 0, Count: 9}}}}}},
			{Label: "B", Settings: []recording.Setting{{Name: "governor", Value: "powersave"}, {Name: "epb", Value: "0"}, {Name: "epp", Value: "power"}},
				CoreTypes: []TypeEvidence{{Type: "P", LevelKHz: 80000, Held: Fields{"min": {{Value: 5, Count: 9}}, "epp": {{Value: 255, Count: 9}}}}}},
		},
		Time: sig(10, 11, 0.95, true),
	}
	res.Time.Name = "time"
	res.Figures = []Figure{sig(100, 150, 1.5, true), sig(1, 2, 2, false)}
	res.Figures[0].Name, res.Figures[1].Name = "energy", "pkg_watt"
	got, hidden := differences(res)
	var lines []string
	for _, d := range got {
		lines = append(lines, d.Kind+" "+d.What+": "+d.A+" / "+d.B)
	}
	want := []string{"setting governor: performance / powersave", "setting epp: - / power",
		"register epp held P: 0 / 255", "register min held P: 62 (4960 MHz) / 5 (400 MHz)",
		"figure energy: 100 s / 150 s", "figure time: 10 s / 11 s"}
	if d := cmp.Diff(want, lines); d != "" || hidden != 1 {
		t.Errorf("differences (-want +got), %d hidden (want 1):\n%s", hidden, d)
	}
	if n := got[len(got)-1].Note; !strings.Contains(n, "point opposite ways") || got[len(got)-2].Note != "" {
		t.Errorf("time's note %q, energy's %q: want the note on time's only", n, got[len(got)-2].Note)
	}
}
