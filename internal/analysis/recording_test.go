// SPDX-License-Identifier: Apache-2.0

package analysis

import (
	"slices"
	"strings"
	"testing"

	"github.com/hwpprobe/hwpprobe/internal/kernel/topology"
)

// TestAnalyzeRecording: a `record` file's runs and evidence per core type,
// as a side's (the emulated Core Ultra 7 165U, its governor switched to
// performance on CPU 0 mid-run); a file cut inside a record says so.
func TestAnalyzeRecording(t *testing.T) {
	tests := []struct {
		file    string
		missing string
	}{
		{"../files/recording/testdata/v1/emu-mtl.rec", ""},
		{"../files/recording/testdata/v1/emu-mtl-cut.rec", "truncated"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			srcs, _ := ReadSources([]string{tt.file})
			if len(srcs) != 1 {
				t.Fatalf("ReadSources: %d sources", len(srcs))
			}
			rec, err := AnalyzeRecording(srcs[0])
			if err != nil {
				t.Fatal(err)
			}
			if len(rec.Runs) != 1 || rec.Runs[0].Summary().Start.Run != 1 || rec.Evidence.Label != "record" {
				t.Fatalf("runs %+v, label %q", rec.Runs, rec.Evidence.Label)
			}
			var types []topology.CoreType
			for _, ct := range rec.Evidence.CoreTypes {
				types = append(types, ct.Type)
			}
			if want := []topology.CoreType{"P", "E", "LP-E", "all"}; !slices.Equal(types, want) {
				t.Errorf("core types %q, want %q", types, want)
			}
			p := rec.Evidence.CoreTypes[0]
			if len(p.Held["epp"]) == 0 || len(p.Held["max"]) == 0 || p.AvgMHz <= 0 {
				t.Errorf("P-cores: held %v, Avg_MHz %v", p.Held, p.AvgMHz)
			}
			got := strings.Join(rec.Missing, "; ")
			if tt.missing == "" && got != "" || tt.missing != "" && !strings.Contains(got, tt.missing) {
				t.Errorf("missing %q, want %q", got, tt.missing)
			}
		})
	}
}
