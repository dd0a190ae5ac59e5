// SPDX-License-Identifier: Apache-2.0

package words

import (
	"math"
	"testing"

	"github.com/hwpprobe/hwpprobe/analysis"
	"github.com/hwpprobe/hwpprobe/recording"
	"github.com/hwpprobe/hwpprobe/topology"
)

func TestWords(t *testing.T) {
	side := analysis.SideResult{Excursions: 0.125, CoreTypes: []analysis.TypeEvidence{
		{Type: topology.All, Excursions: 0.125}, {Type: "P", Excursions: 0.2}, {Type: "E", Excursions: 0}, {Type: "LP-E", Excursions: math.NaN()}}}
	tests := []struct{ name, got, want string }{
		{"no values", FieldCounts(nil), "-"},
		{"one value", FieldCounts([]analysis.FieldCount{{Value: 48, Count: 9}}), "48"},
		{"shares", FieldCounts([]analysis.FieldCount{{Value: 48, Count: 97}, {Value: 4, Count: 3}}), "48 (97%), 4 (3%)"},
		{"limits largest first, ties by name", LimitShares(map[string]float64{"b": 0.5, "PkgPwrL2": 0.03, "a": 0.5}), "a 50%, b 50%, PkgPwrL2 3%"},
		{"no limits", LimitShares(nil), "not sampled"},
		{"excursions per type", Excursions(side), "12.5% of CPU-samples (P 20.0%, E 0.0%)"},
		{"settings", Settings([]recording.Setting{{Name: "scaling_governor", Value: "powersave"}, {Name: "energy_performance_preference", Value: "balance_performance"}}),
			"scaling_governor=powersave energy_performance_preference=balance_performance"},
		{"no settings", Settings(nil), "(as recorded)"},
		{"no HWP_STATUS", Excursions(analysis.SideResult{Excursions: math.NaN()}), "HWP_STATUS not sampled"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}
