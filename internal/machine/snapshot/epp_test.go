// SPDX-License-Identifier: Apache-2.0

package snapshot

import "testing"

// TestEPPTables checks the tables against drivers/cpufreq/intel_pstate.c
// (epp_values[] and intel_epp_default[], v6.13+) and amd-pstate.c.
func TestEPPTables(t *testing.T) {
	tests := []struct {
		name          string
		table         EPPTable
		perf, balPerf uint8
		balPower, pwr uint8
	}{
		{"default (Whiskey Lake 6:142)", IntelEPPTable(6, 0x8E), 0, 0x80, 0xC0, 0xFF},
		{"ALDERLAKE_L: HWP_SET_DEF_BALANCE_PERF_EPP(102)", IntelEPPTable(6, 0x9A), 0, 102, 0xC0, 0xFF},
		{"SAPPHIRERAPIDS_X: HWP_SET_DEF_BALANCE_PERF_EPP(32)", IntelEPPTable(6, 0x8F), 0, 32, 0xC0, 0xFF},
		{"GRANITERAPIDS_X", IntelEPPTable(6, 0xAD), 0, 32, 0xC0, 0xFF},
		{"METEORLAKE_L: HWP_SET_EPP_VALUES(HWP_EPP_POWERSAVE, 179, 64, 16)", IntelEPPTable(6, 0xAA), 16, 64, 179, 255},
		{"ARROWLAKE: same as Meteor Lake", IntelEPPTable(6, 0xC6), 16, 64, 179, 255},
		{"family 19 (not matched): default", IntelEPPTable(19, 0xAA), 0, 0x80, 0xC0, 0xFF},
		{"amd-pstate", AMDEPPTable(), 0, 0x80, 0xBF, 0xFF},
	}
	for _, tt := range tests {
		tb := tt.table
		if tb.Performance != tt.perf || tb.BalancePerformance != tt.balPerf || tb.BalancePower != tt.balPower || tb.Power != tt.pwr {
			t.Errorf("%s: %+v", tt.name, tb)
		}
		for _, name := range []string{"performance", "balance_performance", "balance_power", "power"} {
			v, ok := tb.Value(name)
			if !ok || tb.Name(v) != name {
				t.Errorf("%s: %s -> %d (%v) -> %q", tt.name, name, v, ok, tb.Name(v))
			}
		}
	}
	mtl := IntelEPPTable(6, 0xAA)
	for _, tt := range []struct {
		in   string
		v    uint8
		ok   bool
		name string
	}{
		{"default", 0, false, ""},       // the boot value: not known from sysfs
		{"128", 128, true, "128"},       // raw values are accepted by store_energy_performance_preference()
		{"256", 0, false, ""},           // beyond 8 bits: the kernel answers EINVAL
		{"balance-power", 0, false, ""}, // an EPB name, not an EPP one
	} {
		v, ok := mtl.Value(tt.in)
		if v != tt.v || ok != tt.ok {
			t.Errorf("Value(%q) = %d, %v; want %d, %v", tt.in, v, ok, tt.v, tt.ok)
		}
		if ok && mtl.Name(v) != tt.name {
			t.Errorf("Name(%d) = %q, want %q", v, mtl.Name(v), tt.name)
		}
	}
}
