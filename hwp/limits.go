// SPDX-License-Identifier: Apache-2.0

package hwp

import "strconv"

// sdmClientModels are the Intel family 6 client models whose
// MSR_CORE_PERF_LIMIT_REASONS (0x64F) hwpprobe decodes with the SDM's
// table for the 6th generation Intel Core processors (vol. 4, table
// "MSRs Supported by 6th Generation Intel Core Processors", MSR 64FH),
// named as in the kernel's arch/x86/include/asm/intel-family.h. The SDM
// gives that table for Skylake and lists it among the tables the later
// client generations support; the bit meanings of the newest parts are
// assumed to stay the same (hwpemu's model makes the same assumption).
var sdmClientModels = map[uint32]string{
	0x4E: "Skylake-L", 0x5E: "Skylake", 0x8E: "Kaby Lake-L", 0x9E: "Kaby Lake",
	0x66: "Cannon Lake-L", 0xA5: "Comet Lake", 0xA6: "Comet Lake-L", 0x7E: "Ice Lake-L",
	0x8C: "Tiger Lake-L", 0x8D: "Tiger Lake", 0xA7: "Rocket Lake",
	0x97: "Alder Lake", 0x9A: "Alder Lake-L", 0xB7: "Raptor Lake", 0xBA: "Raptor Lake-P", 0xBF: "Raptor Lake-S",
	0xAA: "Meteor Lake-L", 0xAC: "Meteor Lake", 0xB5: "Arrow Lake-U", 0xC5: "Arrow Lake-H", 0xC6: "Arrow Lake",
	0xBD: "Lunar Lake-M",
}

// SDMCoreLimitTable returns the SDM's bit table of MSR_CORE_PERF_LIMIT_REASONS
// (0x64F) for the client models from Skylake on, or false for other
// models (whose bits hwpprobe shows raw). Each status bit n (15:0) is set
// while its reason holds the frequency below the operating system's
// request; bit n+16 is its log, sticky until software writes 0. Names
// are turbostat's where its Haswell table (CoreLimitTable) has a bit of
// the same meaning (PROCHOT, ThermStatus, VR-Therm, PkgPwrL1, PkgPwrL2,
// MultiCoreTurbo for "Max Turbo Limit", Transitions for "Turbo Transition
// Attenuation"), short forms of the SDM's names otherwise.
func SDMCoreLimitTable(family, model uint32) (LimitTable, bool) {
	m, ok := sdmClientModels[model]
	if family != 6 || !ok {
		return LimitTable{}, false
	}
	return LimitTable{Name: "SDM vol. 4 MSR 64FH, 6th generation Intel Core and later (" + m + ")", Reasons: []LimitReason{
		{0, "PROCHOT", "prochot", ""},                   // PROCHOT Status
		{1, "ThermStatus", "therm_status", ""},          // Thermal Status
		{4, "ResidencyReg", "residency_regulation", ""}, // Residency State Regulation Status
		{5, "RATL", "running_average_thermal", ""},      // Running Average Thermal Limit Status
		{6, "VR-Therm", "vr_therm", ""},                 // VR Therm Alert Status
		{7, "VR-TDC", "vr_tdc", ""},                     // VR Therm Design Current Status
		{8, "Other", "other", ""},                       // Other Status (electrical or other constraints)
		{10, "PkgPwrL1", "pkg_pwr_l1", ""},              // Package/Platform-Level Power Limiting PL1 Status
		{11, "PkgPwrL2", "pkg_pwr_l2", ""},              // Package/Platform-Level PL2 Power Limiting Status
		{12, "MultiCoreTurbo", "multi_core_turbo", ""},  // Max Turbo Limit Status
		{13, "Transitions", "transitions", ""},          // Turbo Transition Attenuation Status
	}}, true
}

// LimitReasonNames decodes a *_PERF_LIMIT_REASONS value with t, or, where
// the model has no table (t nil), names the set status bits (15:0) and
// log bits (31:16) "bitN" by their status bit's number.
func LimitReasonNames(v uint64, t *LimitTable) (active, logged []string) {
	if t != nil {
		return DecodeLimitReasons(v, *t)
	}
	for n := range 16 {
		if v>>n&1 != 0 {
			active = append(active, "bit"+strconv.Itoa(n))
		}
		if v>>(n+16)&1 != 0 {
			logged = append(logged, "bit"+strconv.Itoa(n))
		}
	}
	return active, logged
}
