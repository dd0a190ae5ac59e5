// SPDX-License-Identifier: Apache-2.0

package regs

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/rapl"
)

// Default context values, used (and listed in Decoded.Assumptions) when
// the Context lacks the register.
const (
	// DefaultTjMax is the TjMax turbostat assumes when
	// MSR_TEMPERATURE_TARGET cannot be read (turbostat.c, set_temperature_target).
	DefaultTjMax = 100
	// DefaultAMDPowerUnitRaw is AMD RAPL_PWR_UNIT as read on a Ryzen 9
	// 7950X (turbostat 21.05.04 output, regs/testdata): 1 W,
	// 15.3 µJ, 977 µs.
	DefaultAMDPowerUnitRaw = 0x000a1000
)

// fixedDRAMUnit reports the models with has_fixed_rapl_unit in
// turbostat.c (hsx, bdx, skx, icx and knl platform_features), whose DRAM
// domain counts in 2^-16 J (15.3 µJ) whatever MSR_RAPL_POWER_UNIT says.
func fixedDRAMUnit(family, model uint32) bool {
	if family != 6 {
		return false
	}
	switch model {
	case 0x3F, 0x4F, 0x56, 0x55, 0x6A, 0x6C, 0x57, 0x85:
		return true
	}
	return false
}

// The request and bias registers' fields: the SDM's names (docs/kernel-facts.md
// section 2 says where each comes from; the AMD request has none), and
// x86_energy_perf_policy's and turbostat's spellings as aliases ("min %d
// max %d des %d epp 0x%x window 0x%x pkg 0x%x"; x86_energy_perf_policy's
// "use_pkg %d"). The decoders in package hwp read the same bits.
var (
	hwpRequestFields = []FieldSpec{
		{Name: "min", Hi: 7, Lo: 0, SDM: "Minimum_Performance", Aliases: []string{"min"}},
		{Name: "max", Hi: 15, Lo: 8, SDM: "Maximum_Performance", Aliases: []string{"max"}},
		{Name: "desired", Hi: 23, Lo: 16, SDM: "Desired_Performance", Aliases: []string{"des"}},
		{Name: "epp", Hi: 31, Lo: 24, SDM: "Energy_Performance_Preference", Aliases: []string{"epp"}},
		{Name: "activity_window", Hi: 41, Lo: 32, SDM: "Activity_Window", Aliases: []string{"window"}},
		{Name: "package_control", Hi: 42, Lo: 42, SDM: "Package_Control", Aliases: []string{"pkg", "use_pkg"}},
		// The per-field valid bits of newer parts (docs/kernel-facts.md
		// section 2), which the decoder shows as one number.
		{Name: "valid_bits", Hi: 63, Lo: 59},
	}
	cppcRequestFields = []FieldSpec{
		{Name: "max", Hi: 7, Lo: 0, Aliases: []string{"max"}},
		{Name: "min", Hi: 15, Lo: 8, Aliases: []string{"min"}},
		{Name: "desired", Hi: 23, Lo: 16, Aliases: []string{"des"}},
		{Name: "epp", Hi: 31, Lo: 24, Aliases: []string{"epp"}},
	}
	epbFields = []FieldSpec{
		{Name: "epb", Hi: 3, Lo: 0, SDM: "Power Policy Preference", Aliases: []string{"epb"}},
	}
)

// The other registers' fields. Names are the JSON names of the fields the
// decoders below show where they show the raw bits (a decoder that shows
// watts, joules, seconds or °C computes them from the fields named here:
// pl1_power for pl1_w); SDM names are the SDM's as docs/kernel-facts.md
// section 2 lists their sources, empty where none was found; aliases are
// the words turbostat and
// x86_energy_perf_policy print for a field, and none where they print
// none. TestFieldSpecVectors checks every list against its register's
// decoder on the real values of testdata/.
var (
	hwpCapabilitiesFields = []FieldSpec{
		{Name: "highest", Hi: 7, Lo: 0, SDM: "Highest_Performance", Aliases: []string{"high"}},
		{Name: "guaranteed", Hi: 15, Lo: 8, SDM: "Guaranteed_Performance", Aliases: []string{"guar"}},
		{Name: "most_efficient", Hi: 23, Lo: 16, SDM: "Most_Efficient_Performance", Aliases: []string{"eff"}},
		{Name: "lowest", Hi: 31, Lo: 24, SDM: "Lowest_Performance", Aliases: []string{"low"}},
	}
	// pmEnableFields: turbostat prints "(HWP)" or "(No-HWP)".
	pmEnableFields = []FieldSpec{
		{Name: "hwp_enable", Hi: 0, Lo: 0, SDM: "HWP_ENABLE", Aliases: []string{"HWP"}},
	}
	// hwpInterruptFields: turbostat's "EN_Guaranteed_Perf_Change,
	// EN_Excursion_Min" (msr-index.h HWP_CHANGE_TO_GUARANTEED_INT bit 0,
	// HWP_EXCURSION_TO_MINIMUM_INT bit 1).
	hwpInterruptFields = []FieldSpec{
		{Name: "guaranteed_perf_change", Hi: 0, Lo: 0, SDM: "EN_Guaranteed_Performance_Change", Aliases: []string{"EN_Guaranteed_Perf_Change"}},
		{Name: "excursion_min", Hi: 1, Lo: 1, SDM: "EN_Excursion_Minimum", Aliases: []string{"EN_Excursion_Min"}},
		{Name: "highest_change", Hi: 2, Lo: 2},
	}
	// hwpStatusFields: turbostat's "Guaranteed_Perf_Change, Excursion_Min"
	// (msr-index.h HWP_GUARANTEED_CHANGE 0x1, HWP_EXCURSION_TO_MINIMUM 0x4).
	hwpStatusFields = []FieldSpec{
		{Name: "guaranteed_perf_change", Hi: 0, Lo: 0, SDM: "Guaranteed_Performance_Change", Aliases: []string{"Guaranteed_Perf_Change"}},
		{Name: "excursion_min", Hi: 2, Lo: 2, SDM: "Excursion_To_Minimum", Aliases: []string{"Excursion_Min"}},
		{Name: "highest_change", Hi: 3, Lo: 3},
		{Name: "peci_override_entry", Hi: 4, Lo: 4},
		{Name: "peci_override_exit", Hi: 5, Lo: 5},
	}
	// miscEnableFields are the bits the decoder reads (msr-index.h
	// MSR_IA32_MISC_ENABLE_*_BIT); turbostat's dump_misc_enable prints
	// TCC (TM1, bit 3), EIST, MWAIT, PREFETCH (prefetch disable) and TURBO
	// (turbo disable), with "No-" for what is off.
	miscEnableFields = []FieldSpec{
		{Name: "fast_strings", Hi: 0, Lo: 0, SDM: "Fast-Strings Enable"},
		{Name: "tcc", Hi: 3, Lo: 3, SDM: "Automatic Thermal Control Circuit Enable", Aliases: []string{"TCC"}},
		{Name: "perfmon", Hi: 7, Lo: 7, SDM: "Performance Monitoring Available"},
		{Name: "prefetch_disable", Hi: 9, Lo: 9, SDM: "Hardware Prefetcher Disable", Aliases: []string{"PREFETCH"}},
		{Name: "eist", Hi: 16, Lo: 16, SDM: "Enhanced Intel SpeedStep Technology Enable", Aliases: []string{"EIST"}},
		{Name: "mwait", Hi: 18, Lo: 18, SDM: "ENABLE MONITOR FSM", Aliases: []string{"MWAIT"}},
		{Name: "limit_cpuid", Hi: 22, Lo: 22, SDM: "Limit CPUID Maxval"},
		{Name: "xd_disable", Hi: 34, Lo: 34, SDM: "XD Bit Disable"},
		{Name: "turbo_disable", Hi: 38, Lo: 38, SDM: "Turbo Mode Disable", Aliases: []string{"TURBO"}},
	}
	platformInfoFields = []FieldSpec{
		{Name: "base_ratio", Hi: 15, Lo: 8, SDM: "Maximum Non-Turbo Ratio"},
		{Name: "programmable_ratio_limit", Hi: 28, Lo: 28, SDM: "Programmable Ratio Limit for Turbo Mode"},
		{Name: "programmable_tdp_limit", Hi: 29, Lo: 29, SDM: "Programmable TDP Limit for Turbo Mode"},
		{Name: "programmable_tj_offset", Hi: 30, Lo: 30, SDM: "Programmable TJ OFFSET"},
		{Name: "max_efficiency_ratio", Hi: 47, Lo: 40, SDM: "Maximum Efficiency Ratio"},
		{Name: "min_operating_ratio", Hi: 55, Lo: 48, SDM: "Minimum Operating Ratio"},
	}
	// The ratio is the upper byte of the SDM's 16-bit "Current" and
	// "Target performance State Value" (bits 15:0), which the SDM does not
	// split: the field has no SDM name of its own (docs/kernel-facts.md
	// section 2).
	perfStatusFields = []FieldSpec{
		{Name: "ratio", Hi: 15, Lo: 8},
	}
	perfCtlFields = []FieldSpec{
		{Name: "ratio", Hi: 15, Lo: 8},
		{Name: "turbo_disengage", Hi: 32, Lo: 32, SDM: "IDA Engage"},
	}
	// temperatureTargetFields: turbostat's "(%d C) (%d default - %d
	// offset)".
	temperatureTargetFields = []FieldSpec{
		{Name: "tjmax_c", Hi: 23, Lo: 16, SDM: "Temperature Target", Aliases: []string{"default"}},
		{Name: "offset_c", Hi: 29, Lo: 24, SDM: "TCC Activation Offset", Aliases: []string{"offset"}},
	}
	thermStatusFields    = thermFields(false)
	pkgThermStatusFields = thermFields(true)
	turboRatioFields     = byteFields("ratio_%dc", "Maximum Ratio Limit for %dC", 1)
	// turboRatio1Fields is the group core count layout (Skylake-SP and
	// later servers, Atoms: MSR_TURBO_RATIO_LIMIT_CORES); on Ivy Bridge-EP
	// and Haswell-EP the same bytes are ratios for 9-16 active cores,
	// which the decoder tells by the CPU model.
	turboRatio1Fields = byteFields("group%d_cores", "NUMCORE_%d", 0)
	// powerUnitFields is the layout of Intel's MSR_RAPL_POWER_UNIT and of
	// AMD's RAPL_PWR_UNIT (the same, package rapl).
	powerUnitFields = []FieldSpec{
		{Name: "power_units", Hi: 3, Lo: 0, SDM: "Power Units"},
		{Name: "energy_units", Hi: 12, Lo: 8, SDM: "Energy Status Units"},
		{Name: "time_units", Hi: 19, Lo: 16, SDM: "Time Units"},
	}
	// powerInfoFields: turbostat's "(%.0f W TDP, RAPL %.0f - %.0f W, %f
	// sec.)".
	powerInfoFields = []FieldSpec{
		{Name: "tdp", Hi: 14, Lo: 0, SDM: "Thermal Spec Power", Aliases: []string{"TDP"}},
		{Name: "min_power", Hi: 30, Lo: 16, SDM: "Minimum Power"},
		{Name: "max_power", Hi: 46, Lo: 32, SDM: "Maximum Power"},
		{Name: "max_window", Hi: 53, Lo: 48, SDM: "Maximum Time Window"},
	}
	// powerLimitFields: each limit's time window is (1 + F/4) x 2^Y time
	// units (rapl.DecodePowerLimit); turbostat prints "PKG Limit #N:
	// %sabled (%f Watts, %f sec, clamp %sabled)" and "(locked)" or
	// "(UNlocked)".
	powerLimitFields = append(append(powerLimit(1, 0), powerLimit(2, 32)...),
		FieldSpec{Name: "locked", Hi: 63, Lo: 63, SDM: "Lock", Aliases: []string{"locked"}})
	energyStatusFields = []FieldSpec{
		{Name: "energy_count", Hi: 31, Lo: 0, SDM: "Total Energy Consumed"},
	}
	mperfFields = []FieldSpec{{Name: "count", Hi: 63, Lo: 0, SDM: "C0_MCNT"}}
	aperfFields = []FieldSpec{{Name: "count", Hi: 63, Lo: 0, SDM: "C0_ACNT"}}
	// The AMD CPPC registers' fields carry no SDM name: no PPR text was
	// at hand to check one against (docs/kernel-facts.md section 2).
	cppcCap1Fields = []FieldSpec{
		{Name: "lowest", Hi: 7, Lo: 0},
		{Name: "lowest_nonlinear", Hi: 15, Lo: 8},
		{Name: "nominal", Hi: 23, Lo: 16},
		{Name: "highest", Hi: 31, Lo: 24},
	}
	cppcEnableFields = []FieldSpec{
		{Name: "cppc_enable", Hi: 0, Lo: 0},
	}
)

// The *_PERF_LIMIT_REASONS bits: status bit n (15:0) and its sticky log
// bit n+16. Names are package hwp's (the JSON names of its tables), SDM
// names those of hwp's SDM table, aliases turbostat's words; turbostat
// prints the unnamed Haswell core bits 2, 14 and 15 as "bitN" and their
// logs by their own number.
var (
	// coreLimitFields is 0x64F on the 6th generation Intel Core and later
	// client parts (hwp.SDMCoreLimitTable; turbostat names none of them,
	// the aliases are those of its Haswell bits of the same meaning).
	coreLimitFields = limitFields([]limitBit{
		{0, "prochot", "PROCHOT Status", "PROCHOT Log", "PROCHOT", ""},
		{1, "therm_status", "Thermal Status", "Thermal Log", "ThermStatus", ""},
		{4, "residency_regulation", "Residency State Regulation Status", "Residency State Regulation Log", "", ""},
		{5, "running_average_thermal", "Running Average Thermal Limit Status", "Running Average Thermal Limit Log", "", ""},
		{6, "vr_therm", "VR Therm Alert Status", "VR Therm Alert Log", "VR-Therm", ""},
		{7, "vr_tdc", "VR Therm Design Current Status", "VR Thermal Design Current Log", "", ""},
		{8, "other", "Other Status", "Other Log", "", ""},
		{10, "pkg_pwr_l1", "Package/Platform-Level Power Limiting PL1 Status", "Package/Platform-Level PL1 Power Limiting Log", "PkgPwrL1", ""},
		{11, "pkg_pwr_l2", "Package/Platform-Level PL2 Power Limiting Status", "Package/Platform-Level PL2 Power Limiting Log", "PkgPwrL2", ""},
		{12, "multi_core_turbo", "Max Turbo Limit Status", "Max Turbo Limit Log", "MultiCoreTurbo", ""},
		{13, "transitions", "Turbo Transition Attenuation Status", "Turbo Transition Attenuation Log", "Transitions", ""},
	})
	// The Haswell tables of turbostat, taken from package hwp's
	// (hwp.CoreLimitTable, GfxLimitTable, RingLimitTable on a model each
	// reads): no repository document quotes the SDM's names.
	hswCoreLimitFields = turbostatLimitFields(hwp.CoreLimitTable, 0x3C)
	gfxLimitFields     = turbostatLimitFields(hwp.GfxLimitTable, 0x45)
	ringLimitFields    = turbostatLimitFields(hwp.RingLimitTable, 0x3F)
)

// limitBit is one named status bit of a *_PERF_LIMIT_REASONS register.
type limitBit struct {
	bit    uint8
	name   string
	sdm    string // the SDM's name of the status bit
	logSDM string // the SDM's name of its log bit, not always sdm with "Log" for "Status"
	alias  string
	logAka string // turbostat's word for the log bit where it is not alias
}

// turbostatLimitFields returns the fields of hwp's table for a family 6
// model, in bit order: JSON names as names, turbostat's words as aliases.
func turbostatLimitFields(table func(family, model uint32) (hwp.LimitTable, bool), model uint32) []FieldSpec {
	t, ok := table(6, model)
	if !ok {
		panic(fmt.Sprintf("regs: no limit-reason table for 6:%#x", model))
	}
	rs := slices.Clone(t.Reasons)
	slices.SortFunc(rs, func(a, b hwp.LimitReason) int { return cmp.Compare(a.Bit, b.Bit) })
	bits := make([]limitBit, len(rs))
	for i, r := range rs {
		bits[i] = limitBit{bit: uint8(r.Bit), name: r.JSON, alias: r.Name, logAka: r.LogName}
	}
	return limitFields(bits)
}

// limitFields returns the status fields of bits and then their log
// fields (name_log, bit+16).
func limitFields(bits []limitBit) []FieldSpec {
	var status, logs []FieldSpec
	for _, b := range bits {
		status = append(status, FieldSpec{Name: b.name, Hi: b.bit, Lo: b.bit, SDM: b.sdm, Aliases: aliases(b.alias)})
		la := b.logAka
		if la == "" {
			la = b.alias
		}
		logs = append(logs, FieldSpec{Name: b.name + "_log", Hi: b.bit + 16, Lo: b.bit + 16,
			SDM: b.logSDM, Aliases: aliases(la)})
	}
	return append(status, logs...)
}

// aliases returns nil for "" and a one-name list otherwise.
func aliases(a string) []string {
	if a == "" {
		return nil
	}
	return []string{a}
}

// thermFields returns the fields of IA32_THERM_STATUS or, with pkg,
// IA32_PACKAGE_THERM_STATUS, whose bits 15:12 and 31:27 are reserved and
// whose SDM names start with "Package" (docs/kernel-facts.md section 2).
func thermFields(pkg bool) []FieldSpec {
	events := []struct{ name, status, log string }{
		{"thermal", "Thermal Status", "Thermal Status Log"},
		{"prochot", "PROCHOT# or FORCEPR# Event", "PROCHOT# or FORCEPR# Log"},
		{"critical", "Critical Temperature Status", "Critical Temperature Log"},
		{"threshold1", "Thermal Threshold #1 Status", "Thermal Threshold #1 Log"},
		{"threshold2", "Thermal Threshold #2 Status", "Thermal Threshold #2 Log"},
		{"power_limit", "Power Limitation Status", "Power Limitation Log"},
		{"current_limit", "Current Limit Status", "Current Limit Log"},
		{"cross_domain_limit", "Cross-domain Limit Status", "Cross-domain Limit Log"},
	}
	prefix := ""
	if pkg {
		prefix, events = "Package ", events[:6]
		// The package register's bits 2 and 3 are "Package PROCHOT#
		// Event" and "Log": no FORCEPR#.
		events[1].status, events[1].log = "PROCHOT# Event", "PROCHOT# Log"
	}
	var fs []FieldSpec
	for i, e := range events {
		status := e.name
		if status == "thermal" {
			status = "thermal_status"
		}
		fs = append(fs,
			FieldSpec{Name: status, Hi: uint8(2 * i), Lo: uint8(2 * i), SDM: prefix + e.status},
			FieldSpec{Name: e.name + "_log", Hi: uint8(2*i + 1), Lo: uint8(2*i + 1), SDM: prefix + e.log})
	}
	fs = append(fs, FieldSpec{Name: "readout_c", Hi: 22, Lo: 16, SDM: prefix + "Digital Readout"})
	if !pkg {
		fs = append(fs, FieldSpec{Name: "resolution_c", Hi: 30, Lo: 27, SDM: "Resolution in Degrees Celsius"},
			FieldSpec{Name: "reading_valid", Hi: 31, Lo: 31, SDM: "Reading Valid"})
	}
	return fs
}

// byteFields returns eight byte-wide fields, name and SDM formatted with
// the byte's number counted from first.
func byteFields(name, sdm string, first int) []FieldSpec {
	fs := make([]FieldSpec, 8)
	for i := range fs {
		n := i + 1
		fs[i] = FieldSpec{Name: fmt.Sprintf(name, n), Hi: uint8(8*i + 7), Lo: uint8(8 * i), SDM: fmt.Sprintf(sdm, i+first)}
	}
	return fs
}

// powerLimit returns the fields of power limit n of MSR_PKG_POWER_LIMIT,
// which starts at bit lo: power 14:0, enable 15, clamp 16, window Y 21:17
// and F 23:22 (rapl.DecodePowerLimit).
func powerLimit(n int, lo uint8) []FieldSpec {
	p := fmt.Sprintf("pl%d_", n)
	return []FieldSpec{
		{Name: p + "power", Hi: lo + 14, Lo: lo, SDM: fmt.Sprintf("Package Power Limit #%d", n)},
		{Name: p + "enabled", Hi: lo + 15, Lo: lo + 15, SDM: fmt.Sprintf("Enable Power Limit #%d", n)},
		{Name: p + "clamp", Hi: lo + 16, Lo: lo + 16, SDM: fmt.Sprintf("Package Clamping Limitation #%d", n), Aliases: []string{"clamp"}},
		{Name: p + "time_y", Hi: lo + 21, Lo: lo + 17, SDM: fmt.Sprintf("Time Window for Power Limit #%d", n)},
		{Name: p + "time_f", Hi: lo + 23, Lo: lo + 22, SDM: fmt.Sprintf("Time Window for Power Limit #%d", n)},
	}
}

func registers() []*Register {
	return []*Register{
		{Name: "IA32_MPERF", Role: RoleCounter, Address: hwp.MSR_IA32_MPERF, Scope: Thread,
			Doc: "maximum-frequency (TSC-rate) clock count while in C0", Fields: mperfFields, decode: decodeCounter},
		{Name: "IA32_APERF", Role: RoleCounter, Address: hwp.MSR_IA32_APERF, Scope: Thread,
			Doc: "actual clock count while in C0", Fields: aperfFields, decode: decodeCounter},
		{Name: "MSR_PLATFORM_INFO", Role: RoleCapabilities, Address: hwp.MSR_PLATFORM_INFO, Scope: Package,
			Doc: "base (max non-turbo), max efficiency and min operating ratios", Fields: platformInfoFields, decode: decodePlatformInfo},
		{Name: "IA32_PERF_STATUS", Role: RoleStatus, Address: hwp.MSR_IA32_PERF_STATUS, Scope: Thread,
			Doc: "current performance state (ratio)", Fields: perfStatusFields, decode: decodePerfStatus},
		{Name: "IA32_PERF_CTL", Role: RoleControl, Address: hwp.MSR_IA32_PERF_CTL, Scope: Thread,
			Doc: "requested performance state (ignored while HWP is enabled)", Fields: perfCtlFields, decode: decodePerfCtl},
		{Name: "IA32_THERM_STATUS", Role: RoleThermal, Address: hwp.MSR_IA32_THERM_STATUS, Scope: Core,
			Uses: []uint32{hwp.MSR_TEMPERATURE_TARGET},
			Doc:  "core thermal status and digital temperature readout", Fields: thermStatusFields, decode: decodeThermStatus(false)},
		{Name: "IA32_MISC_ENABLE", Role: RoleEnable, Address: hwp.MSR_IA32_MISC_ENABLE, Scope: Thread,
			Doc: "miscellaneous enables: EIST, turbo disable, TCC, MWAIT", Fields: miscEnableFields, decode: decodeMiscEnable},
		{Name: "MSR_TEMPERATURE_TARGET", Role: RoleThermal, Address: hwp.MSR_TEMPERATURE_TARGET, Scope: Package,
			Doc: "TjMax and TCC activation offset", Fields: temperatureTargetFields, decode: decodeTemperatureTarget},
		{Name: "MSR_TURBO_RATIO_LIMIT", Role: RoleCapabilities, Address: hwp.MSR_TURBO_RATIO_LIMIT, Scope: Package,
			Uses: []uint32{hwp.MSR_TURBO_RATIO_LIMIT1, CPUSignature},
			Doc:  "maximum turbo ratio by number of active cores", Fields: turboRatioFields, decode: decodeTurboRatioLimit},
		{Name: "MSR_TURBO_RATIO_LIMIT1", Role: RoleCapabilities, Address: hwp.MSR_TURBO_RATIO_LIMIT1, Scope: Package,
			Aliases: []string{"MSR_TURBO_RATIO_LIMIT_CORES"},
			Uses:    []uint32{CPUSignature},
			Doc:     "turbo group core counts (group-limit parts) or ratios for 9-16 cores (Ivy Bridge-EP, Haswell-EP)", Fields: turboRatio1Fields, decode: decodeTurboRatioLimit1},
		{Name: "IA32_ENERGY_PERF_BIAS", Role: RoleBias, Sampled: true, Address: hwp.MSR_IA32_ENERGY_PERF_BIAS, Scope: Thread,
			Aliases: []string{"EPB"},
			Fields:  epbFields, Doc: "energy/performance bias hint (EPB)", decode: decodeEPB},
		{Name: "IA32_PACKAGE_THERM_STATUS", Role: RoleThermal, Sampled: true, Address: hwp.MSR_IA32_PACKAGE_THERM_STATUS, Scope: Package,
			Aliases: []string{"PKG_THERM_STATUS"},
			Uses:    []uint32{hwp.MSR_TEMPERATURE_TARGET},
			Doc:     "package thermal status and digital temperature readout", Fields: pkgThermStatusFields, decode: decodeThermStatus(true)},
		{Name: "MSR_RAPL_POWER_UNIT", Role: RoleUnits, Address: rapl.MSR_RAPL_POWER_UNIT, Scope: Package,
			Doc: "RAPL power, energy and time units", Fields: powerUnitFields, decode: decodePowerUnit},
		{Name: "MSR_PKG_POWER_LIMIT", Role: RoleLimit, Sampled: true, Address: rapl.MSR_PKG_POWER_LIMIT, Scope: Package,
			Uses: []uint32{rapl.MSR_RAPL_POWER_UNIT},
			Doc:  "package power limits PL1 and PL2", Fields: powerLimitFields, decode: decodePowerLimit},
		{Name: "MSR_PKG_ENERGY_STATUS", Role: RoleEnergy, Address: rapl.MSR_PKG_ENERGY_STATUS, Scope: Package,
			Uses: []uint32{rapl.MSR_RAPL_POWER_UNIT},
			Doc:  "package energy counter (32 bits, wraps)", Fields: energyStatusFields, decode: decodeEnergy(rapl.MSR_RAPL_POWER_UNIT, false)},
		{Name: "MSR_PKG_POWER_INFO", Role: RoleCapabilities, Address: rapl.MSR_PKG_POWER_INFO, Scope: Package,
			Uses: []uint32{rapl.MSR_RAPL_POWER_UNIT},
			Doc:  "package TDP and power range", Fields: powerInfoFields, decode: decodePowerInfo},
		{Name: "MSR_DRAM_ENERGY_STATUS", Role: RoleEnergy, Address: rapl.MSR_DRAM_ENERGY_STATUS, Scope: Package,
			Uses: []uint32{rapl.MSR_RAPL_POWER_UNIT, CPUSignature},
			Doc:  "DRAM energy counter (32 bits, wraps)", Fields: energyStatusFields, decode: decodeEnergy(rapl.MSR_RAPL_POWER_UNIT, true)},
		{Name: "MSR_PP0_ENERGY_STATUS", Role: RoleEnergy, Address: rapl.MSR_PP0_ENERGY_STATUS, Scope: Package,
			Uses: []uint32{rapl.MSR_RAPL_POWER_UNIT},
			Doc:  "cores (PP0) energy counter (32 bits, wraps)", Fields: energyStatusFields, decode: decodeEnergy(rapl.MSR_RAPL_POWER_UNIT, false)},
		{Name: "MSR_PP1_ENERGY_STATUS", Role: RoleEnergy, Address: rapl.MSR_PP1_ENERGY_STATUS, Scope: Package,
			Uses: []uint32{rapl.MSR_RAPL_POWER_UNIT},
			Doc:  "graphics (PP1) energy counter (32 bits, wraps)", Fields: energyStatusFields, decode: decodeEnergy(rapl.MSR_RAPL_POWER_UNIT, false)},
		{Name: "MSR_PLATFORM_ENERGY_STATUS", Role: RoleEnergy, Address: rapl.MSR_PLATFORM_ENERGY_STATUS, Scope: Package,
			Aliases: []string{"PSYS_ENERGY_STATUS"},
			Uses:    []uint32{rapl.MSR_RAPL_POWER_UNIT},
			Doc:     "platform (psys) energy counter (32 bits, wraps)", Fields: energyStatusFields, decode: decodeEnergy(rapl.MSR_RAPL_POWER_UNIT, false)},
		{Name: "MSR_CORE_PERF_LIMIT_REASONS", Role: RoleLimitReasons, Sampled: true, Address: hwp.MSR_CORE_PERF_LIMIT_REASONS, Scope: Package,
			Aliases: []string{"PERF_LIMIT_REASONS"},
			Doc:     "why the cores run below the requested frequency, 6th generation and later (model-specific bits)", Fields: coreLimitFields, decode: decodeLimitReasons(nil)},
		{Name: "MSR_CORE_PERF_LIMIT_REASONS_HSW", Role: RoleLimitReasons, Address: hwp.MSR_CORE_PERF_LIMIT_REASONS_HSW, Scope: Package,
			Uses: []uint32{CPUSignature},
			Doc:  "why the cores run below the requested frequency, Haswell/Broadwell (turbostat's MSR_CORE_PERF_LIMIT_REASONS)", Fields: hswCoreLimitFields, decode: decodeLimitReasons(hwp.CoreLimitTable)},
		{Name: "MSR_GFX_PERF_LIMIT_REASONS", Role: RoleLimitReasons, Address: hwp.MSR_GFX_PERF_LIMIT_REASONS, Scope: Package,
			Uses: []uint32{CPUSignature},
			Doc:  "why graphics runs below the requested frequency (model-specific bits)", Fields: gfxLimitFields, decode: decodeLimitReasons(hwp.GfxLimitTable)},
		{Name: "MSR_RING_PERF_LIMIT_REASONS", Role: RoleLimitReasons, Address: hwp.MSR_RING_PERF_LIMIT_REASONS, Scope: Package,
			Uses: []uint32{CPUSignature},
			Doc:  "why the ring (uncore) runs below the requested frequency (model-specific bits)", Fields: ringLimitFields, decode: decodeLimitReasons(hwp.RingLimitTable)},
		{Name: "IA32_PM_ENABLE", Role: RoleEnable, Address: hwp.MSR_IA32_PM_ENABLE, Scope: Package,
			Doc: "HWP enable", Fields: pmEnableFields, decode: decodePMEnable},
		{Name: "IA32_HWP_CAPABILITIES", Role: RoleCapabilities, Address: hwp.MSR_IA32_HWP_CAPABILITIES, Scope: Thread,
			Aliases: []string{"HWP_CAP"},
			Doc:     "HWP performance range: highest, guaranteed, most efficient, lowest", Fields: hwpCapabilitiesFields, decode: decodeCapabilities},
		{Name: "IA32_HWP_REQUEST_PKG", Role: RolePackageRequest, request: requestHWP(false), Address: hwp.MSR_IA32_HWP_REQUEST_PKG, Scope: Package,
			Aliases: []string{"HWP_REQ_PKG"},
			Doc:     "package-level HWP request", Fields: hwpRequestFields[:5], decode: decodeRequest(false)},
		{Name: "IA32_HWP_INTERRUPT", Role: RoleInterrupt, Address: hwp.MSR_IA32_HWP_INTERRUPT, Scope: Thread,
			Doc: "HWP notification enables", Fields: hwpInterruptFields, decode: decodeInterrupt},
		{Name: "IA32_HWP_REQUEST", Role: RoleRequest, Sampled: true, request: requestHWP(true), Address: hwp.MSR_IA32_HWP_REQUEST, Scope: Thread,
			Aliases: []string{"HWP_REQ"},
			Doc:     "HWP request: min, max, desired, EPP, activity window", Fields: hwpRequestFields, decode: decodeRequest(true)},
		{Name: "IA32_HWP_STATUS", Role: RoleStatus, Sampled: true, Address: hwp.MSR_IA32_HWP_STATUS, Scope: Thread,
			Doc: "HWP feedback: guaranteed change, excursion to minimum", Fields: hwpStatusFields, decode: decodeStatus},
		{Name: "MSR_AMD_CPPC_CAP1", Role: RoleCapabilities, Address: hwp.MSR_AMD_CPPC_CAP1, Vendor: AMD, Scope: Thread,
			Aliases: []string{"CPPC_CAP1"},
			Doc:     "CPPC performance range: highest, nominal, lowest nonlinear, lowest", Fields: cppcCap1Fields, decode: decodeCPPCCap1},
		{Name: "MSR_AMD_CPPC_ENABLE", Role: RoleEnable, Address: hwp.MSR_AMD_CPPC_ENABLE, Vendor: AMD, Scope: Thread,
			Aliases: []string{"CPPC_ENABLE"},
			Doc:     "CPPC enable", Fields: cppcEnableFields, decode: decodeCPPCEnable},
		{Name: "MSR_AMD_CPPC_REQ", Role: RoleRequest, Sampled: true, request: requestCPPC, Address: hwp.MSR_AMD_CPPC_REQ, Vendor: AMD, Scope: Thread,
			Aliases: []string{"CPPC_REQ"},
			Doc:     "CPPC request: max, min, desired, EPP", Fields: cppcRequestFields, decode: decodeCPPCReq},
		{Name: "MSR_AMD_RAPL_POWER_UNIT", Role: RoleUnits, Address: rapl.MSR_AMD_RAPL_POWER_UNIT, Vendor: AMD, Scope: Package,
			Aliases: []string{"RAPL_PWR_UNIT"},
			Doc:     "AMD RAPL power, energy and time units", Fields: powerUnitFields, decode: decodePowerUnit},
		{Name: "MSR_AMD_CORE_ENERGY_STATUS", Role: RoleEnergy, Address: rapl.MSR_AMD_CORE_ENERGY_STATUS, Vendor: AMD, Scope: Core,
			Aliases: []string{"CORE_ENERGY_STAT"},
			Uses:    []uint32{rapl.MSR_AMD_RAPL_POWER_UNIT},
			Doc:     "AMD core energy counter (32 bits, wraps)", Fields: energyStatusFields, decode: decodeEnergy(rapl.MSR_AMD_RAPL_POWER_UNIT, false)},
		{Name: "MSR_AMD_PKG_ENERGY_STATUS", Role: RoleEnergy, Address: rapl.MSR_AMD_PKG_ENERGY_STATUS, Vendor: AMD, Scope: Package,
			Aliases: []string{"PKG_ENERGY_STAT"},
			Uses:    []uint32{rapl.MSR_AMD_RAPL_POWER_UNIT},
			Doc:     "AMD package energy counter (32 bits, wraps)", Fields: energyStatusFields, decode: decodeEnergy(rapl.MSR_AMD_RAPL_POWER_UNIT, false)},
	}
}

// onOff gives 1 or 0 for a flag that turbostat prints as a number.
func onOff(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// prefixNo returns "" when b is set and no otherwise (turbostat's
// "%sHWP" with "No-").
func prefixNo(b bool, no string) string {
	if b {
		return ""
	}
	return no
}

func decodeCounter(d *Decoded, _ Context) {
	d.add("count", d.Raw)
	d.Summary = fmt.Sprintf("%d", d.Raw)
}

func decodeRequest(thread bool) func(*Decoded, Context) {
	return func(d *Decoded, _ Context) {
		r := hwp.DecodeRequest(d.Raw)
		d.add("min", uint64(r.Min))
		d.add("max", uint64(r.Max))
		d.add("desired", uint64(r.Desired))
		d.add("epp", uint64(r.EPP))
		d.add("activity_window", uint64(r.ActivityWindow))
		d.add("activity_window_us", r.ActivityWindowMicros())
		// turbostat and x86_energy_perf_policy print these fields for
		// both registers, though bit 42 and the valid bits belong to
		// IA32_HWP_REQUEST only.
		s := fmt.Sprintf("min %d max %d des %d epp 0x%x window 0x%x", r.Min, r.Max, r.Desired, r.EPP, r.ActivityWindow)
		if r.ActivityWindow != 0 {
			// x86_energy_perf_policy's "(%d*10^%dus)"; the whole
			// 10-bit field, where turbostat masks it with 0xff3.
			s += fmt.Sprintf(" (%d*10^%dus)", r.ActivityWindow&0x7f, r.ActivityWindow>>7&0x7)
		}
		if thread {
			d.add("package_control", onOff(r.PackageControl))
			d.add("valid_bits", uint64(r.Valid))
			s += fmt.Sprintf(" pkg 0x%x", onOff(r.PackageControl))
		}
		d.Summary = s
	}
}

func decodeCapabilities(d *Decoded, _ Context) {
	c := hwp.DecodeCapabilities(d.Raw)
	d.add("highest", uint64(c.Highest))
	d.add("guaranteed", uint64(c.Guaranteed))
	d.add("most_efficient", uint64(c.MostEfficient))
	d.add("lowest", uint64(c.Lowest))
	d.Summary = fmt.Sprintf("high %d guar %d eff %d low %d", c.Highest, c.Guaranteed, c.MostEfficient, c.Lowest)
}

func decodePMEnable(d *Decoded, _ Context) {
	on := hwp.DecodePMEnable(d.Raw)
	d.add("hwp_enable", onOff(on))
	d.Summary = prefixNo(on, "No-") + "HWP"
}

func decodeInterrupt(d *Decoded, _ Context) {
	i := hwp.DecodeInterrupt(d.Raw)
	d.add("guaranteed_perf_change", onOff(i.GuaranteedPerfChange))
	d.add("excursion_min", onOff(i.ExcursionMin))
	d.add("highest_change", onOff(i.HighestChange))
	en := func(b bool) string {
		if b {
			return "EN"
		}
		return "Dis"
	}
	d.Summary = fmt.Sprintf("%s_Guaranteed_Perf_Change, %s_Excursion_Min", en(i.GuaranteedPerfChange), en(i.ExcursionMin))
}

func decodeStatus(d *Decoded, _ Context) {
	s := hwp.DecodeStatus(d.Raw)
	d.add("guaranteed_perf_change", onOff(s.GuaranteedPerfChange))
	d.add("excursion_min", onOff(s.ExcursionMin))
	d.add("highest_change", onOff(s.HighestChange))
	d.add("peci_override_entry", onOff(s.PECIOverrideEntry))
	d.add("peci_override_exit", onOff(s.PECIOverrideExit))
	d.Summary = fmt.Sprintf("%sGuaranteed_Perf_Change, %sExcursion_Min",
		prefixNo(s.GuaranteedPerfChange, "No-"), prefixNo(s.ExcursionMin, "No-"))
}

func decodeEPB(d *Decoded, ctx Context) {
	e := hwp.DecodeEPB(d.Raw)
	d.add("epb", uint64(e))
	normal := uint8(hwp.EPBNormalDefault)
	if sig, ok := ctx[CPUSignature]; ok {
		normal = hwp.EPBNormal(FamilyModel(sig))
	}
	if n := hwp.EPBNameFor(e, normal); n != "" {
		d.add("epb_name", n)
	}
	d.Summary = hwp.EPBTurbostatName(e)
}

func decodePlatformInfo(d *Decoded, _ Context) {
	p := hwp.DecodePlatformInfo(d.Raw)
	d.add("base_ratio", uint64(p.MaxNonTurboRatio))
	d.add("max_efficiency_ratio", uint64(p.MaxEfficiencyRatio))
	d.add("min_operating_ratio", uint64(p.MinOperatingRatio))
	d.add("programmable_ratio_limit", p.ProgrammableRatioLimit)
	d.add("programmable_tdp_limit", p.ProgrammableTDPLimit)
	d.add("programmable_tj_offset", p.ProgrammableTjOffset)
	d.Summary = fmt.Sprintf("base ratio %d, max efficiency ratio %d", p.MaxNonTurboRatio, p.MaxEfficiencyRatio)
	if p.MinOperatingRatio != 0 {
		d.Summary += fmt.Sprintf(", min operating ratio %d", p.MinOperatingRatio)
	}
}

func decodePerfStatus(d *Decoded, _ Context) {
	r := hwp.DecodePerfStatus(d.Raw)
	d.add("ratio", uint64(r))
	d.Summary = fmt.Sprintf("ratio %d", r)
}

func decodePerfCtl(d *Decoded, _ Context) {
	p := hwp.DecodePerfCtl(d.Raw)
	d.add("ratio", uint64(p.TargetRatio))
	d.add("turbo_disengage", p.TurboDisengage)
	d.Summary = fmt.Sprintf("ratio %d", p.TargetRatio)
	if p.TurboDisengage {
		d.Summary += ", turbo disengaged"
	}
}

func decodeMiscEnable(d *Decoded, _ Context) {
	m := hwp.DecodeMiscEnable(d.Raw)
	d.add("fast_strings", m.FastStrings)
	d.add("tcc", m.AutoTCC)
	d.add("perfmon", m.PerfMon)
	d.add("prefetch_disable", m.PrefetchDisable)
	d.add("eist", m.EIST)
	d.add("mwait", m.MWAIT)
	d.add("limit_cpuid", m.LimitCPUID)
	d.add("xd_disable", m.XDDisable)
	d.add("turbo_disable", m.TurboDisable)
	// turbostat.c, dump_misc_enable (wording kept).
	d.Summary = fmt.Sprintf("%sTCC %sEIST %sMWAIT %sPREFETCH %sTURBO",
		prefixNo(m.AutoTCC, "No-"), prefixNo(m.EIST, "No-"), prefixNo(m.MWAIT, "No-"),
		prefixNo(!m.PrefetchDisable, "No-"), prefixNo(!m.TurboDisable, "No-"))
}

func decodeTemperatureTarget(d *Decoded, _ Context) {
	t := hwp.DecodeTemperatureTarget(d.Raw)
	d.add("tjmax_c", int(t.TjMax))
	d.add("offset_c", int(t.Offset))
	d.add("tcc_activation_c", int(t.TjMax)-int(t.Offset))
	// turbostat.c, set_temperature_target: "(%d C) (%d default - %d offset)".
	d.Summary = fmt.Sprintf("%d C) (%d default - %d offset", int(t.TjMax)-int(t.Offset), t.TjMax, t.Offset)
}

// tjMax returns TjMax from MSR_TEMPERATURE_TARGET in ctx, or the default
// with an assumption.
func tjMax(d *Decoded, ctx Context) uint8 {
	if v, ok := ctx[hwp.MSR_TEMPERATURE_TARGET]; ok {
		if t := hwp.DecodeTemperatureTarget(v); t.TjMax != 0 {
			return t.TjMax
		}
		d.assume("MSR_TEMPERATURE_TARGET 0x%x has TjMax 0: assumed %d C", v, DefaultTjMax)
		return DefaultTjMax
	}
	d.assume("TjMax not given (MSR_TEMPERATURE_TARGET): assumed %d C", DefaultTjMax)
	return DefaultTjMax
}

func decodeThermStatus(pkg bool) func(*Decoded, Context) {
	return func(d *Decoded, ctx Context) {
		s := hwp.DecodeThermStatus(d.Raw)
		tj := tjMax(d, ctx)
		temp := hwp.Temperature(tj, s.Readout)
		d.add("temperature_c", temp)
		d.add("readout_c", int(s.Readout))
		d.add("tjmax_c", int(tj))
		if !pkg {
			d.add("resolution_c", int(s.Resolution))
			d.add("reading_valid", s.ReadingValid)
		}
		d.add("thermal_status", s.ThermalStatus)
		d.add("thermal_log", s.ThermalLog)
		d.add("prochot", s.PROCHOT)
		d.add("prochot_log", s.PROCHOTLog)
		d.add("critical", s.Critical)
		d.add("critical_log", s.CriticalLog)
		d.add("threshold1", s.Threshold1)
		d.add("threshold1_log", s.Threshold1Log)
		d.add("threshold2", s.Threshold2)
		d.add("threshold2_log", s.Threshold2Log)
		d.add("power_limit", s.PowerLimit)
		d.add("power_limit_log", s.PowerLimitLog)
		if !pkg {
			d.add("current_limit", s.CurrentLimit)
			d.add("current_limit_log", s.CurrentLimitLog)
			d.add("cross_domain_limit", s.CrossDomain)
			d.add("cross_domain_limit_log", s.CrossDomainLog)
		}
		// turbostat.c, print_thermal: "(%d C +/- %d)" for the core
		// register, "(%d C)" for the package one.
		if pkg {
			d.Summary = fmt.Sprintf("%d C", temp)
		} else {
			d.Summary = fmt.Sprintf("%d C +/- %d", temp, s.Resolution)
		}
		if !pkg && !s.ReadingValid {
			d.assume("Reading_Valid (bit 31) is clear: the readout may be stale")
		}
		var ev []string
		for _, e := range []struct {
			on   bool
			name string
		}{
			{s.ThermalStatus, "thermal"}, {s.PROCHOT, "PROCHOT"}, {s.Critical, "critical"},
			{s.Threshold1, "threshold1"}, {s.Threshold2, "threshold2"}, {s.PowerLimit, "power-limit"},
			{!pkg && s.CurrentLimit, "current-limit"}, {!pkg && s.CrossDomain, "cross-domain"},
		} {
			if e.on {
				ev = append(ev, e.name)
			}
		}
		if len(ev) > 0 {
			d.Summary += ", active: " + strings.Join(ev, " ")
		}
	}
}

// trl1Layout returns the layout of MSR_TURBO_RATIO_LIMIT1 for the CPU in
// the context, core counts (with an assumption) when the model is unknown.
func trl1Layout(d *Decoded, ctx Context) hwp.TRL1Layout {
	sig, ok := ctx[CPUSignature]
	if ok {
		if l := hwp.TurboRatioLimit1Layout(FamilyModel(sig)); l != hwp.TRL1Unknown {
			return l
		}
	}
	d.assume("MSR_TURBO_RATIO_LIMIT1 read as group core counts (turbo ratio group limits: Atom, Skylake-X and later servers); " +
		"on Ivy Bridge-EP and Haswell-EP it holds ratios for 9-16 active cores instead (give --cpu)")
	return hwp.TRL1CoreCounts
}

func decodeTurboRatioLimit(d *Decoded, ctx Context) {
	if counts, ok := ctx[hwp.MSR_TURBO_RATIO_LIMIT1]; ok && trl1Layout(d, ctx) == hwp.TRL1CoreCounts {
		var parts []string
		for i, g := range hwp.DecodeTurboRatioGroups(d.Raw, counts) {
			d.add(fmt.Sprintf("group%d_cores", i+1), uint64(g.Cores))
			d.add(fmt.Sprintf("group%d_ratio", i+1), uint64(g.Ratio))
			parts = append(parts, fmt.Sprintf("%dc %d", g.Cores, g.Ratio))
		}
		d.Summary = strings.Join(parts, " ")
		return
	}
	decodeRatios(d, 1)
}

// decodeRatios decodes 8 ratio bytes for first .. first+7 active cores.
func decodeRatios(d *Decoded, first int) {
	var parts []string
	for i := 0; i < 8; i++ {
		r := uint8(d.Raw >> (8 * i))
		d.add(fmt.Sprintf("ratio_%dc", first+i), uint64(r))
		if r != 0 {
			parts = append(parts, fmt.Sprintf("%dc %d", first+i, r))
		}
	}
	d.Summary = strings.Join(parts, " ")
}

func decodeTurboRatioLimit1(d *Decoded, ctx Context) {
	if trl1Layout(d, ctx) == hwp.TRL1Ratios9To16 {
		decodeRatios(d, 9)
		return
	}
	var parts []string
	for i := 0; i < 8; i++ {
		c := uint8(d.Raw >> (8 * i))
		d.add(fmt.Sprintf("group%d_cores", i+1), uint64(c))
		parts = append(parts, fmt.Sprintf("%d", c))
	}
	d.Summary = "cores " + strings.Join(parts, " ")
}

// powerUnit returns the RAPL units from ctx at addr, or the default with
// an assumption.
func powerUnit(d *Decoded, ctx Context, addr uint32) rapl.PowerUnit {
	if v, ok := ctx[addr]; ok {
		return rapl.DecodePowerUnit(v)
	}
	name, def := "MSR_RAPL_POWER_UNIT", uint64(rapl.DefaultPowerUnitRaw)
	if addr == rapl.MSR_AMD_RAPL_POWER_UNIT {
		name, def = "MSR_AMD_RAPL_POWER_UNIT", DefaultAMDPowerUnitRaw
	}
	u := rapl.DecodePowerUnit(def)
	d.assume("%s not given: assumed 0x%x (%s)", name, def, unitText(u))
	return u
}

// unitText describes RAPL units briefly: "1/8 W, 61 µJ, 977 µs".
func unitText(u rapl.PowerUnit) string {
	p := "1 W"
	if u.PowerBits > 0 {
		p = fmt.Sprintf("1/%d W", uint64(1)<<u.PowerBits)
	}
	return fmt.Sprintf("%s, %.3g µJ, %.3g µs", p, u.Energy*1e6, u.Time*1e6)
}

func decodePowerUnit(d *Decoded, _ Context) {
	u := rapl.DecodePowerUnit(d.Raw)
	d.add("power_unit_w", u.Power)
	d.add("energy_unit_j", u.Energy)
	d.add("time_unit_s", u.Time)
	// turbostat.c, rapl_probe: "(%f Watts, %f Joules, %f sec.)".
	d.Summary = fmt.Sprintf("%f Watts, %f Joules, %f sec.", u.Power, u.Energy, u.Time)
}

func decodePowerInfo(d *Decoded, ctx Context) {
	u := powerUnit(d, ctx, rapl.MSR_RAPL_POWER_UNIT)
	p := rapl.DecodePowerInfo(d.Raw, u)
	d.add("tdp_w", p.TDP)
	d.add("min_power_w", p.MinPower)
	d.add("max_power_w", p.MaxPower)
	d.add("max_window_s", p.MaxWindow)
	// turbostat.c, print_rapl: "(%.0f W TDP, RAPL %.0f - %.0f W, %f sec.)".
	d.Summary = fmt.Sprintf("%.0f W TDP, RAPL %.0f - %.0f W, %f sec.", p.TDP, p.MinPower, p.MaxPower, p.MaxWindow)
}

func decodePowerLimit(d *Decoded, ctx Context) {
	u := powerUnit(d, ctx, rapl.MSR_RAPL_POWER_UNIT)
	p := rapl.DecodePowerLimit(d.Raw, u)
	for _, l := range []struct {
		n string
		l rapl.Limit
	}{{"pl1", p.PL1}, {"pl2", p.PL2}} {
		d.add(l.n+"_w", l.l.Power)
		d.add(l.n+"_enabled", l.l.Enabled)
		d.add(l.n+"_clamp", l.l.Clamp)
		d.add(l.n+"_time_s", l.l.Window)
	}
	d.add("locked", p.Locked)
	// turbostat.c, print_rapl: "PKG Limit #1: %sabled (%0.3f Watts,
	// %f sec, clamp %sabled)".
	ab := func(b bool) string {
		if b {
			return "ENabled"
		}
		return "DISabled"
	}
	d.Summary = fmt.Sprintf("PKG Limit #1: %s (%.3f Watts, %f sec, clamp %s); PKG Limit #2: %s (%.3f Watts, %f* sec, clamp %s)",
		ab(p.PL1.Enabled), p.PL1.Power, p.PL1.Window, ab(p.PL1.Clamp),
		ab(p.PL2.Enabled), p.PL2.Power, p.PL2.Window, ab(p.PL2.Clamp))
	if p.Locked {
		d.Summary += "; locked"
	} else {
		d.Summary += "; UNlocked"
	}
}

func decodeEnergy(unitAddr uint32, dram bool) func(*Decoded, Context) {
	return func(d *Decoded, ctx Context) {
		c := rapl.EnergyCount(d.Raw)
		var e float64
		switch sig, ok := ctx[CPUSignature]; {
		case dram && ok && fixedDRAMUnit(FamilyModel(sig)):
			_, m := FamilyModel(sig)
			d.assume("model 0x%x uses the fixed DRAM energy unit 2^-16 J (15.3 µJ), not MSR_RAPL_POWER_UNIT (turbostat has_fixed_rapl_unit)", m)
			e = float64(c) / 65536
		default:
			u := powerUnit(d, ctx, unitAddr)
			e = rapl.Joules(uint64(c), u)
			if dram && !ok {
				d.assume("CPU model not given: DRAM energy counted in MSR_RAPL_POWER_UNIT units; Haswell-X, Broadwell-X/D, Skylake-X, Ice Lake-X/D and Xeon Phi use a fixed 15.3 µJ")
			}
		}
		d.add("energy_count", uint64(c))
		d.add("energy_j", e)
		d.Summary = fmt.Sprintf("%.6f J", e)
	}
}

// decodeLimitReasons decodes a *_PERF_LIMIT_REASONS register with the
// bit table that table returns for the CPU in the context; a nil table
// means no reference tool names the bits.
func decodeLimitReasons(table func(family, model uint32) (hwp.LimitTable, bool)) func(*Decoded, Context) {
	return func(d *Decoded, ctx Context) {
		active, logged := d.Raw&0xffff, d.Raw>>16&0xffff
		d.add("active_bits", active)
		d.add("logged_bits", logged)
		raw := fmt.Sprintf("Active: 0x%04x, Logged: 0x%04x", active, logged)
		if table == nil {
			d.assume("bit meanings are model-specific and turbostat names none for 0x64f: raw bits only " +
				"(turbostat's MSR_CORE_PERF_LIMIT_REASONS lines are register 0x690: decode them as 0x690=VALUE)")
			d.Summary = raw
			return
		}
		sig, ok := ctx[CPUSignature]
		if !ok {
			d.assume("CPU model not given: bit meanings are model-specific, raw bits only")
			d.Summary = raw
			return
		}
		f, m := FamilyModel(sig)
		t, ok := table(f, m)
		if !ok {
			d.assume("no bit table for family %d model 0x%x (turbostat decodes this register on Haswell only): raw bits only", f, m)
			d.Summary = raw
			return
		}
		d.add("table", t.Name)
		for _, r := range t.Reasons {
			d.add(r.JSON, d.Raw>>r.Bit&1 != 0)
			d.add(r.JSON+"_log", d.Raw>>(r.Bit+16)&1 != 0)
		}
		a, l := hwp.DecodeLimitReasons(d.Raw, t)
		// turbostat.c print_perf_limit wording, without its trailing ", ".
		d.Summary = fmt.Sprintf("Active: %s) (Logged: %s", strings.Join(a, ", "), strings.Join(l, ", "))
	}
}

func decodeCPPCCap1(d *Decoded, _ Context) {
	c := hwp.DecodeCPPCCap1(d.Raw)
	d.add("highest", uint64(c.Highest))
	d.add("nominal", uint64(c.Nominal))
	d.add("lowest_nonlinear", uint64(c.LowestNonlinear))
	d.add("lowest", uint64(c.Lowest))
	d.Summary = fmt.Sprintf("highest %d nominal %d lowest_nonlinear %d lowest %d", c.Highest, c.Nominal, c.LowestNonlinear, c.Lowest)
}

func decodeCPPCEnable(d *Decoded, _ Context) {
	on := hwp.DecodeCPPCEnable(d.Raw)
	d.add("cppc_enable", onOff(on))
	d.Summary = prefixNo(on, "No-") + "CPPC"
}

func decodeCPPCReq(d *Decoded, _ Context) {
	r := hwp.DecodeCPPCReq(d.Raw)
	d.add("min", uint64(r.Min))
	d.add("max", uint64(r.Max))
	d.add("desired", uint64(r.Desired))
	d.add("epp", uint64(r.EPP))
	d.Summary = fmt.Sprintf("min %d max %d des %d epp 0x%x", r.Min, r.Max, r.Desired, r.EPP)
}
