// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"strconv"
	"strings"
)

// EPPTable maps the energy_performance_preference names to the register
// EPP values the kernel writes for them on one CPU model.
type EPPTable struct {
	Source             string `json:"source"`
	Performance        uint8  `json:"performance"`
	BalancePerformance uint8  `json:"balance_performance"`
	BalancePower       uint8  `json:"balance_power"`
	Power              uint8  `json:"power"`
}

// Value returns the EPP the kernel writes for a sysfs string: one of the
// four names, or a decimal number (intel_pstate and amd-pstate accept raw
// values). ok is false for "default" (the boot-time value, not known here)
// and for anything else.
func (t EPPTable) Value(s string) (v uint8, ok bool) {
	switch s {
	case "performance":
		return t.Performance, true
	case "balance_performance":
		return t.BalancePerformance, true
	case "balance_power":
		return t.BalancePower, true
	case "power":
		return t.Power, true
	}
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 8)
	if err != nil {
		return 0, false
	}
	return uint8(n), true
}

// Name returns the sysfs name for a register EPP, or its decimal value
// when no name maps to it, as show_energy_performance_preference() prints.
func (t EPPTable) Name(v uint8) string {
	switch v {
	case t.Performance:
		return "performance"
	case t.BalancePerformance:
		return "balance_performance"
	case t.BalancePower:
		return "balance_power"
	case t.Power:
		return "power"
	}
	return strconv.Itoa(int(v))
}

// Intel models with their own EPP tables (arch/x86/include/asm/intel-family.h).
const (
	modelAlderLakeL      = 0x9A
	modelSapphireRapidsX = 0x8F
	modelEmeraldRapidsX  = 0xCF
	modelGraniteRapidsX  = 0xAD
	modelGraniteRapidsD  = 0xAE
	modelMeteorLakeL     = 0xAA
	modelArrowLake       = 0xC6
)

// IntelEPPTable returns intel_pstate's table for a family 6 model.
// drivers/cpufreq/intel_pstate.c: epp_values[] defaults to HWP_EPP_
// PERFORMANCE 0, HWP_EPP_BALANCE_PERFORMANCE 0x80, HWP_EPP_BALANCE_POWERSAVE
// 0xC0, HWP_EPP_POWERSAVE 0xFF; intel_epp_default[] (6.13+) overrides
// balance_performance to 102 on ALDERLAKE_L and to 32 on SAPPHIRERAPIDS_X,
// EMERALDRAPIDS_X, GRANITERAPIDS_X/D, and sets the whole table to
// HWP_SET_EPP_VALUES(HWP_EPP_POWERSAVE, 179, 64, 16) on METEORLAKE_L and
// ARROWLAKE. When firmware enabled HWP with an EPP in (0, 0x80], the kernel
// takes that value as balance_performance instead
// (intel_pstate_update_epp_defaults()); hwpprobe cannot see that value.
func IntelEPPTable(family, model int) EPPTable {
	t := EPPTable{Source: "intel_pstate.c epp_values[] default", Performance: 0, BalancePerformance: 0x80, BalancePower: 0xC0, Power: 0xFF}
	if family != 6 {
		return t
	}
	switch model {
	case modelAlderLakeL:
		t.Source, t.BalancePerformance = "intel_pstate.c intel_epp_default[] ALDERLAKE_L", 102
	case modelSapphireRapidsX, modelEmeraldRapidsX, modelGraniteRapidsX, modelGraniteRapidsD:
		t.Source, t.BalancePerformance = "intel_pstate.c intel_epp_default[] Xeon (balance_performance 32)", 32
	case modelMeteorLakeL, modelArrowLake:
		t = EPPTable{Source: "intel_pstate.c intel_epp_default[] METEORLAKE_L/ARROWLAKE", Performance: 16, BalancePerformance: 64, BalancePower: 179, Power: 255}
	}
	return t
}

// AMDEPPTable returns amd-pstate's table (drivers/cpufreq/amd-pstate.c:
// AMD_CPPC_EPP_PERFORMANCE 0x00, AMD_CPPC_EPP_BALANCE_PERFORMANCE 0x80,
// AMD_CPPC_EPP_BALANCE_POWERSAVE 0xBF, AMD_CPPC_EPP_POWERSAVE 0xFF).
func AMDEPPTable() EPPTable {
	return EPPTable{Source: "amd-pstate.c epp_values[]", Performance: 0, BalancePerformance: 0x80, BalancePower: 0xBF, Power: 0xFF}
}
