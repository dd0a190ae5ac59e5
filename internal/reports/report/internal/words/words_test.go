// SPDX-License-Identifier: Apache-2.0

package words

import (
	"math"
	"testing"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
)

func TestWords(t *testing.T) {
	tests := []struct{ name, got, want string }{
		{"no values", FieldCounts(nil), "-"},
		{"one value", FieldCounts([]analysis.FieldCount{{Value: 48, Count: 9}}), "48"},
		{"shares", FieldCounts([]analysis.FieldCount{{Value: 48, Count: 97}, {Value: 4, Count: 3}}), "48 (97%), 4 (3%)"},
		{"limits longest first, ties by name", LimitSeconds(map[string]float64{"b": 5, "PkgPwrL2": 0.25, "a": 5, "c": 0}, 0), "a 5.0 s, b 5.0 s, PkgPwrL2 0.2 s"},
		{"limits of the run", LimitSeconds(map[string]float64{"PkgPwrL1": 2.5}, 10), "PkgPwrL1 2.5 s of 10.0 s"},
		{"no limit active", LimitSeconds(map[string]float64{}, 0), "none"},
		{"no limits", LimitSeconds(nil, 0), "not sampled"},
		{"new excursions per type, P first", NewExcursions(map[string]int{"LP-E": 1, "E": 0, "P": 2}, 3), "+3 (P 2, LP-E 1) in 3 runs"},
		{"no new excursions", NewExcursions(map[string]int{"P": 0}, 0), "none"},
		{"no HWP_STATUS", NewExcursions(nil, -1), "HWP_STATUS not read"},
		{"power split", Facts(analysis.RunFacts{Power: analysis.Power{Package: 15.25, Cores: 9, Graphics: math.NaN(), Rest: 6.25, Psys: 20}}).Power,
			"package 15.2 W = cores 9.0 + rest 6.2; psys 20.0 W"},
		{"phase", Facts(analysis.RunFacts{Parallel: analysis.Phase{Seconds: 3, BzyMHz: map[string]float64{"all": 3000, "E": 2500, "P": 3100}}}).Parallel,
			"3.0 s: P 3100, E 2500 MHz"},
		{"power limits", Facts(analysis.RunFacts{Limits: []analysis.LimitStep{
			{How: "before", Source: "MSR_PKG_POWER_LIMIT", PL1W: 15, PL1TimeS: 28, PL2W: 57}, {How: "before", Source: "intel-rapl-mmio:0", PL1W: 15, PL1TimeS: math.NaN(), PL2W: 57},
			{How: "write", T: 3.5, Source: "MSR_PKG_POWER_LIMIT", PL1W: 10, PL2W: 57},
			{How: "after", Source: "MSR_PKG_POWER_LIMIT", PL1W: 10, PL1TimeS: 28, PL2W: 57}, {How: "after", Source: "intel-rapl-mmio:0", PL1W: 15, PL1TimeS: math.NaN(), PL2W: 57}}}).PowerLimit,
			"before MSR 15/57 W (28s), intel-rapl-mmio:0 15/57 W; write +3.50s MSR 10/57 W; after MSR 10/57 W (28s), intel-rapl-mmio:0 15/57 W"},
		{"settings", Settings([]recording.Setting{{Name: "scaling_governor", Value: "powersave"}, {Name: "energy_performance_preference", Value: "balance_performance"}}),
			"scaling_governor=powersave energy_performance_preference=balance_performance"},
		{"no settings", Settings(nil), "(as recorded)"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}
