// SPDX-License-Identifier: Apache-2.0

package analysis_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
)

// TestExcursionShares: the share of CPU-samples with IA32_HWP_STATUS's
// Excursion_To_Minimum (bit 2) set, per side and per core type, on the
// emulated Core Ultra 7 165U experiment (every CPU row holds 0x4, which
// its `hwpprobe diff` output, emu-mtl-diff.diff, shows as 100% of
// CPU-samples for P, E and LP-E), as recorded and with the bit cleared
// in side B's E-core rows: B's E-cores then have none, its P- and
// LP-E-cores all, and the side the share of its rows that are not
// E-cores.
func TestExcursionShares(t *testing.T) {
	const fixture = "../files/recording/testdata/v2/emu-mtl-diff.rec"
	tests := []struct {
		name   string
		clearB string // the core type whose bit is cleared in side B
	}{
		{"as recorded", ""},
		{"B's E-cores cleared", "E"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := recording.ReadFile(fixture)
			if err != nil {
				t.Fatal(err)
			}
			rows, kept := 0, 0 // side B's measured CPU rows, and those whose bit stays
			for _, run := range rec.Runs {
				for i := range run.Samples {
					for j := range run.Samples[i].CPUs {
						row := &run.Samples[i].CPUs[j]
						if run.Start.Side != "B" {
							continue
						}
						cleared := row.CoreType == tc.clearB
						for k := range row.Regs {
							if row.Regs[k].MSR == hwp.MSR_IA32_HWP_STATUS && cleared {
								row.Regs[k].Value &^= 1 << 2
							}
						}
						if !run.Start.Warmup {
							rows++
							if !cleared {
								kept++
							}
						}
					}
				}
			}
			res, err := analysis.Analyze([]analysis.Source{{Name: "emu-mtl-diff.rec", Rec: rec}}, analysis.Options{}, true)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]float64{"A": 1, "A P": 1, "A E": 1, "A LP-E": 1, "A all": 1,
				"B": float64(kept) / float64(rows), "B P": 1, "B E": 1, "B LP-E": 1, "B all": float64(kept) / float64(rows)}
			if tc.clearB != "" {
				want["B "+tc.clearB] = 0
			}
			got := map[string]float64{}
			for _, s := range res.Sides {
				got[s.Label] = s.Excursions
				for _, ct := range s.CoreTypes {
					got[s.Label+" "+string(ct.Type)] = ct.Excursions
				}
			}
			if d := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-12)); d != "" || rows == 0 {
				t.Errorf("excursion shares (-want +got), of %d rows of side B:\n%s", rows, d)
			}
		})
	}
}
