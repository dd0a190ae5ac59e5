// SPDX-License-Identifier: Apache-2.0

package hwp

// The decoders in this file follow the register layouts of the Intel SDM
// vol. 3B ch. 15 and vol. 4 (Model-Specific Registers), as also read by the
// kernel's tools/power/x86/turbostat/turbostat.c and
// tools/power/x86/x86_energy_perf_policy/x86_energy_perf_policy.c.

// Register addresses not covered by the block in regs.go.
const (
	// MSR_TURBO_RATIO_LIMIT1 is 0x1AE. On parts with turbo ratio group
	// limits (Atom Goldmont and later, Skylake-SP and later servers, hybrid
	// parts) it holds the active-core count of each group in
	// MSR_TURBO_RATIO_LIMIT; on Ivy Bridge-EP/Haswell-EP it holds further
	// ratios instead (turbostat: has_turbo_ratio_group_limits).
	MSR_TURBO_RATIO_LIMIT1 = 0x1AE
	// MSR_CORE_PERF_LIMIT_REASONS_HSW is 0x690, the register that
	// turbostat and the kernel's msr-index.h call MSR_CORE_PERF_LIMIT_REASONS
	// (the SDM's Haswell and Broadwell tables); 6th-generation and later
	// parts report core limit reasons at 0x64F (MSR_CORE_PERF_LIMIT_REASONS
	// above) with other bits.
	MSR_CORE_PERF_LIMIT_REASONS_HSW = 0x690
	// MSR_GFX_PERF_LIMIT_REASONS and MSR_RING_PERF_LIMIT_REASONS are the
	// graphics and ring (uncore) companions of 0x690 (msr-index.h).
	MSR_GFX_PERF_LIMIT_REASONS  = 0x6B0
	MSR_RING_PERF_LIMIT_REASONS = 0x6B1
)

func bit(v uint64, n uint) bool { return v>>n&1 != 0 }

// Interrupt is IA32_HWP_INTERRUPT (0x773): which HWP notifications raise a
// thermal interrupt.
type Interrupt struct {
	GuaranteedPerfChange bool // EN_Guaranteed_Performance_Change, bit 0
	ExcursionMin         bool // EN_Excursion_Minimum, bit 1
	HighestChange        bool // EN_Highest_Change, bit 2 (if CPUID.06H:EAX[15])
}

// DecodeInterrupt decodes IA32_HWP_INTERRUPT.
func DecodeInterrupt(v uint64) Interrupt {
	return Interrupt{
		GuaranteedPerfChange: bit(v, 0),
		ExcursionMin:         bit(v, 1),
		HighestChange:        bit(v, 2),
	}
}

// Status is IA32_HWP_STATUS (0x777): sticky HWP feedback bits.
type Status struct {
	GuaranteedPerfChange bool // Guaranteed_Performance_Change, bit 0
	ExcursionMin         bool // Excursion_To_Minimum, bit 2 (bit 1 is reserved)
	HighestChange        bool // Highest_Change, bit 3
	PECIOverrideEntry    bool // PECI_Override_Entry, bit 4
	PECIOverrideExit     bool // PECI_Override_Exit, bit 5
}

// DecodeStatus decodes IA32_HWP_STATUS. Excursion_To_Minimum is bit 2 as
// in the SDM; turbostat before its January 2023 fix tested bit 1.
func DecodeStatus(v uint64) Status {
	return Status{
		GuaranteedPerfChange: bit(v, 0),
		ExcursionMin:         bit(v, 2),
		HighestChange:        bit(v, 3),
		PECIOverrideEntry:    bit(v, 4),
		PECIOverrideExit:     bit(v, 5),
	}
}

// DecodePMEnable returns HWP_ENABLE, bit 0 of IA32_PM_ENABLE (0x770).
func DecodePMEnable(v uint64) bool { return bit(v, 0) }

// PlatformInfo is MSR_PLATFORM_INFO (0xCE).
type PlatformInfo struct {
	MaxNonTurboRatio       uint8 // Maximum Non-Turbo Ratio (base), bits 15:8
	ProgrammableRatioLimit bool  // Programmable Ratio Limit for Turbo Mode, bit 28
	ProgrammableTDPLimit   bool  // Programmable TDP Limit for Turbo Mode, bit 29
	ProgrammableTjOffset   bool  // Programmable TJ OFFSET, bit 30
	MaxEfficiencyRatio     uint8 // Maximum Efficiency Ratio, bits 47:40
	MinOperatingRatio      uint8 // Minimum Operating Ratio, bits 55:48 (0: not reported)
}

// DecodePlatformInfo decodes MSR_PLATFORM_INFO.
func DecodePlatformInfo(v uint64) PlatformInfo {
	return PlatformInfo{
		MaxNonTurboRatio:       uint8(v >> 8),
		ProgrammableRatioLimit: bit(v, 28),
		ProgrammableTDPLimit:   bit(v, 29),
		ProgrammableTjOffset:   bit(v, 30),
		MaxEfficiencyRatio:     uint8(v >> 40),
		MinOperatingRatio:      uint8(v >> 48),
	}
}

// DecodePerfStatus returns the current performance ratio of
// IA32_PERF_STATUS (0x198), bits 15:8.
func DecodePerfStatus(v uint64) uint8 { return uint8(v >> 8) }

// PerfCtl is IA32_PERF_CTL (0x199).
type PerfCtl struct {
	TargetRatio    uint8 // target performance state value, bits 15:8
	TurboDisengage bool  // IDA (turbo) engage disable, bit 32
}

// DecodePerfCtl decodes IA32_PERF_CTL.
func DecodePerfCtl(v uint64) PerfCtl {
	return PerfCtl{TargetRatio: uint8(v >> 8), TurboDisengage: bit(v, 32)}
}

// MiscEnable is the power-management part of IA32_MISC_ENABLE (0x1A0).
type MiscEnable struct {
	FastStrings     bool // bit 0
	AutoTCC         bool // automatic thermal control circuit enable (TM1), bit 3
	PerfMon         bool // performance monitoring available, bit 7
	PrefetchDisable bool // hardware prefetcher disable, bit 9
	EIST            bool // Enhanced Intel SpeedStep Technology enable, bit 16
	MWAIT           bool // ENABLE MONITOR FSM, bit 18
	LimitCPUID      bool // limit CPUID maxval, bit 22
	XDDisable       bool // XD bit disable, bit 34
	TurboDisable    bool // IDA/turbo mode disable, bit 38
}

// DecodeMiscEnable decodes IA32_MISC_ENABLE.
func DecodeMiscEnable(v uint64) MiscEnable {
	return MiscEnable{
		FastStrings:     bit(v, 0),
		AutoTCC:         bit(v, 3),
		PerfMon:         bit(v, 7),
		PrefetchDisable: bit(v, 9),
		EIST:            bit(v, 16),
		MWAIT:           bit(v, 18),
		LimitCPUID:      bit(v, 22),
		XDDisable:       bit(v, 34),
		TurboDisable:    bit(v, 38),
	}
}

// TemperatureTarget is MSR_TEMPERATURE_TARGET (0x1A2).
type TemperatureTarget struct {
	TjMax  uint8 // Temperature Target (TjMax) in °C, bits 23:16
	Offset uint8 // TCC activation offset in °C, bits 29:24
}

// DecodeTemperatureTarget decodes MSR_TEMPERATURE_TARGET. The offset is
// read from bits 29:24 (6 bits) as the SDM describes for current parts;
// turbostat reads only bits 27:24 on some older models.
func DecodeTemperatureTarget(v uint64) TemperatureTarget {
	return TemperatureTarget{TjMax: uint8(v >> 16), Offset: uint8(v>>24) & 0x3f}
}

// ThermStatus is IA32_THERM_STATUS (0x19C) or IA32_PACKAGE_THERM_STATUS
// (0x1B1). Each event has a status bit (the condition now) and a log bit
// (sticky, set since software last cleared it).
type ThermStatus struct {
	ThermalStatus   bool  // bit 0
	ThermalLog      bool  // bit 1
	PROCHOT         bool  // PROCHOT# or FORCEPR# event, bit 2
	PROCHOTLog      bool  // bit 3
	Critical        bool  // critical temperature status, bit 4
	CriticalLog     bool  // bit 5
	Threshold1      bool  // thermal threshold #1 status, bit 6
	Threshold1Log   bool  // bit 7
	Threshold2      bool  // thermal threshold #2 status, bit 8
	Threshold2Log   bool  // bit 9
	PowerLimit      bool  // power limitation status, bit 10
	PowerLimitLog   bool  // bit 11
	CurrentLimit    bool  // current limit status, bit 12 (core register only)
	CurrentLimitLog bool  // bit 13 (core register only)
	CrossDomain     bool  // cross-domain limit status, bit 14 (core register only)
	CrossDomainLog  bool  // bit 15 (core register only)
	Readout         uint8 // digital readout: °C below TjMax, bits 22:16
	Resolution      uint8 // resolution in °C, bits 30:27 (core register only)
	ReadingValid    bool  // bit 31 (core register only)
}

// DecodeThermStatus decodes IA32_THERM_STATUS or IA32_PACKAGE_THERM_STATUS.
// Bits 15:12, 30:27 and 31 are reserved in the package register.
func DecodeThermStatus(v uint64) ThermStatus {
	return ThermStatus{
		ThermalStatus:   bit(v, 0),
		ThermalLog:      bit(v, 1),
		PROCHOT:         bit(v, 2),
		PROCHOTLog:      bit(v, 3),
		Critical:        bit(v, 4),
		CriticalLog:     bit(v, 5),
		Threshold1:      bit(v, 6),
		Threshold1Log:   bit(v, 7),
		Threshold2:      bit(v, 8),
		Threshold2Log:   bit(v, 9),
		PowerLimit:      bit(v, 10),
		PowerLimitLog:   bit(v, 11),
		CurrentLimit:    bit(v, 12),
		CurrentLimitLog: bit(v, 13),
		CrossDomain:     bit(v, 14),
		CrossDomainLog:  bit(v, 15),
		Readout:         uint8(v>>16) & 0x7f,
		Resolution:      uint8(v>>27) & 0xf,
		ReadingValid:    bit(v, 31),
	}
}

// Temperature returns the temperature in °C for a thermal status readout:
// TjMax minus the readout. The TCC offset is not subtracted (as turbostat).
func Temperature(tjMax, readout uint8) int { return int(tjMax) - int(readout) }

// TurboGroup is one turbo ratio limit: the highest ratio while at most
// Cores cores are active.
type TurboGroup struct {
	Cores uint8
	Ratio uint8
}

// DecodeTurboRatioLimit decodes MSR_TURBO_RATIO_LIMIT (0x1AD) on parts
// without group limits: byte i is the ratio limit for i+1 active cores.
// Bytes that are 0 are omitted, as turbostat does.
func DecodeTurboRatioLimit(v uint64) []TurboGroup {
	return DecodeTurboRatioGroups(v, 0x0807060504030201)
}

// DecodeTurboRatioGroups decodes MSR_TURBO_RATIO_LIMIT with the active
// core count of each group taken from MSR_TURBO_RATIO_LIMIT1 (0x1AE) on
// parts with group limits: byte i of ratios applies up to byte i of
// counts cores. Groups whose ratio is 0 are omitted (turbostat.c,
// dump_turbo_ratio_limits).
func DecodeTurboRatioGroups(ratios, counts uint64) []TurboGroup {
	var g []TurboGroup
	for i := uint(0); i < 8; i++ {
		r, c := uint8(ratios>>(8*i)), uint8(counts>>(8*i))
		if r == 0 {
			continue
		}
		g = append(g, TurboGroup{Cores: c, Ratio: r})
	}
	return g
}

// TRL1Layout is what MSR_TURBO_RATIO_LIMIT1 (0x1AE) holds on a CPU.
type TRL1Layout int

// Layouts of MSR_TURBO_RATIO_LIMIT1.
const (
	TRL1Unknown     TRL1Layout = iota // model not known here
	TRL1CoreCounts                    // active-core count of each group of MSR_TURBO_RATIO_LIMIT
	TRL1Ratios9To16                   // ratio limits for 9 to 16 active cores
)

// TurboRatioLimit1Layout returns the layout of MSR_TURBO_RATIO_LIMIT1 on a
// family 6 model as turbostat.c reads it: core counts on the parts with
// turbo ratio group limits (TRL_CORECOUNT: Skylake-X, Ice Lake-X/D,
// Sapphire/Emerald/Granite Rapids, Sierra Forest, Grand Ridge; and the
// Goldmont/Tremont Atoms), ratios for 9-16 cores on Ivy Bridge-EP and
// Haswell-EP (TRL_LIMIT1).
func TurboRatioLimit1Layout(family, model uint32) TRL1Layout {
	if family != 6 {
		return TRL1Unknown
	}
	switch model {
	case 0x55, 0x6A, 0x6C, 0x8F, 0xCF, 0xAD, 0xAE, 0xAF, 0xB6, 0x5C, 0x5F, 0x86:
		return TRL1CoreCounts
	case 0x3E, 0x3F:
		return TRL1Ratios9To16
	}
	return TRL1Unknown
}

// CPPCCap1 is AMD MSR_AMD_CPPC_CAP1 (0xC00102B0). The field order is the
// reverse of IA32_HWP_CAPABILITIES.
type CPPCCap1 struct {
	Highest         uint8 // HighestPerf, bits 31:24
	Nominal         uint8 // NominalPerf, bits 23:16
	LowestNonlinear uint8 // LowestNonlinearPerf, bits 15:8
	Lowest          uint8 // LowestPerf, bits 7:0
}

// DecodeCPPCCap1 decodes MSR_AMD_CPPC_CAP1.
func DecodeCPPCCap1(v uint64) CPPCCap1 {
	return CPPCCap1{
		Highest:         uint8(v >> 24),
		Nominal:         uint8(v >> 16),
		LowestNonlinear: uint8(v >> 8),
		Lowest:          uint8(v),
	}
}

// DecodeCPPCEnable returns CPPC_EN, bit 0 of MSR_AMD_CPPC_ENABLE
// (0xC00102B1).
func DecodeCPPCEnable(v uint64) bool { return bit(v, 0) }

// CPPCReq is AMD MSR_AMD_CPPC_REQ (0xC00102B3).
type CPPCReq struct {
	Max     uint8 // MaxPerf, bits 7:0
	Min     uint8 // MinPerf, bits 15:8
	Desired uint8 // DesPerf, bits 23:16 (0: autonomous)
	EPP     uint8 // EnergyPerfPref, bits 31:24
}

// DecodeCPPCReq decodes MSR_AMD_CPPC_REQ.
func DecodeCPPCReq(v uint64) CPPCReq {
	return CPPCReq{
		Max:     uint8(v),
		Min:     uint8(v >> 8),
		Desired: uint8(v >> 16),
		EPP:     uint8(v >> 24),
	}
}

// EPBName returns the name the kernel gives an EPB value in
// /sys/devices/system/cpu/cpuN/power/energy_perf_bias
// (arch/x86/kernel/cpu/intel_epb.c, energy_perf_strings): 0 "performance",
// 4 "balance-performance", 6 "normal", 8 "balance-power", 15 "power".
// Other values have no name and give "". On the models of EPBNormal the
// kernel's "normal" is 7: use EPBNameFor there.
func EPBName(epb uint8) string { return EPBNameFor(epb, EPBNormalDefault) }

// EPBNameFor is EPBName for a CPU whose "normal" EPB value is normal (see
// EPBNormal).
func EPBNameFor(epb, normal uint8) string {
	for _, e := range epbStrings(normal) {
		if e.value == epb {
			return e.name
		}
	}
	return ""
}

// EPBValue is the reverse of EPBNameFor: the value the kernel writes for
// a name written to energy_perf_bias (energy_perf_bias_store()).
func EPBValue(name string, normal uint8) (uint8, bool) {
	for _, e := range epbStrings(normal) {
		if e.name == name {
			return e.value, true
		}
	}
	return 0, false
}

// epbStrings is intel_epb.c's energy_perf_strings[] with
// energ_perf_values[], "normal" being normal.
func epbStrings(normal uint8) [5]struct {
	name  string
	value uint8
} {
	return [5]struct {
		name  string
		value uint8
	}{{"performance", 0}, {"balance-performance", 4}, {"normal", normal}, {"balance-power", 8}, {"power", 15}}
}

// EPB "normal" values (arch/x86/include/asm/msr-index.h:
// ENERGY_PERF_BIAS_NORMAL and ENERGY_PERF_BIAS_NORMAL_POWERSAVE).
const (
	EPBNormalDefault   = 6
	EPBNormalPowersave = 7
)

// EPBNormal returns the value the kernel writes for "normal" on a CPU
// (intel_epb.c, intel_epb_normal[], since Linux 5.17: "x86: intel_epb:
// Allow model specific normal EPB value"): 7 on Alder Lake-L (6:0x9A),
// Alder Lake-N / Gracemont (6:0xBE) and Raptor Lake-P (6:0xBA), 6
// elsewhere. The kernel also writes it at boot over a firmware EPB of 0.
func EPBNormal(family, model uint32) uint8 {
	if family == 6 {
		switch model {
		case 0x9A, 0xBE, 0xBA:
			return EPBNormalPowersave
		}
	}
	return EPBNormalDefault
}

// EPBTurbostatName returns the word turbostat prints for an EPB value
// (turbostat.c, print_epb): "performance" (0), "balanced" (6),
// "powersave" (15), anything else "custom".
func EPBTurbostatName(epb uint8) string {
	switch epb {
	case 0:
		return "performance"
	case 6:
		return "balanced"
	case 15:
		return "powersave"
	}
	return "custom"
}

// LimitReason names one bit of a *_PERF_LIMIT_REASONS register: bit Bit
// (0-15) is set while the reason limits the frequency, bit Bit+16 is its
// sticky log.
type LimitReason struct {
	Bit  uint
	Name string // turbostat's word
	JSON string // snake_case field name
	// LogName is turbostat's word for the logged bit when it differs
	// from Name: the unnamed bits are "bitN" with their own number.
	LogName string
}

// LimitTable is a model's bit table for one *_PERF_LIMIT_REASONS
// register, in turbostat's print order.
type LimitTable struct {
	Name    string // which table, e.g. "turbostat Haswell core (Haswell-L)"
	Reasons []LimitReason
}

// haswellModel names the family 6 models turbostat.c gives plr_msrs
// (hsw, hsx, hswl and hswg platform_features); "" for the others.
func haswellModel(family, model uint32) string {
	if family != 6 {
		return ""
	}
	switch model {
	case 0x3C:
		return "Haswell"
	case 0x3F:
		return "Haswell-X"
	case 0x45:
		return "Haswell-L"
	case 0x46:
		return "Haswell-G"
	}
	return ""
}

// CoreLimitTable returns turbostat's table for its
// MSR_CORE_PERF_LIMIT_REASONS, which is 0x690
// (MSR_CORE_PERF_LIMIT_REASONS_HSW here), on a CPU, or false where
// turbostat has none: it decodes the register on Haswell only (plr_msrs =
// PLR_CORE; turbostat.c print_perf_limit).
func CoreLimitTable(family, model uint32) (LimitTable, bool) {
	m := haswellModel(family, model)
	if m == "" {
		return LimitTable{}, false
	}
	return LimitTable{Name: "turbostat Haswell core (" + m + ")", Reasons: []LimitReason{
		{15, "bit15", "bit15", "bit31"},
		{14, "bit14", "bit14", "bit30"},
		{13, "Transitions", "transitions", ""},
		{12, "MultiCoreTurbo", "multi_core_turbo", ""},
		{11, "PkgPwrL2", "pkg_pwr_l2", ""},
		{10, "PkgPwrL1", "pkg_pwr_l1", ""},
		{9, "CorePwr", "core_pwr", ""},
		{8, "Amps", "amps", ""},
		{6, "VR-Therm", "vr_therm", ""},
		{5, "Auto-HWP", "auto_hwp", ""},
		{4, "Graphics", "graphics", ""},
		{2, "bit2", "bit2", "bit18"},
		{1, "ThermStatus", "therm_status", ""},
		{0, "PROCHOT", "prochot", ""},
	}}, true
}

// GfxLimitTable returns turbostat's table for MSR_GFX_PERF_LIMIT_REASONS
// (0x6B0), which it reads on the client Haswells (PLR_GFX: hsw, hswl,
// hswg).
func GfxLimitTable(family, model uint32) (LimitTable, bool) {
	m := haswellModel(family, model)
	if m == "" || model == 0x3F {
		return LimitTable{}, false
	}
	return LimitTable{Name: "turbostat Haswell graphics (" + m + ")", Reasons: []LimitReason{
		{0, "PROCHOT", "prochot", ""},
		{1, "ThermStatus", "therm_status", ""},
		{4, "Graphics", "graphics", ""},
		{6, "VR-Therm", "vr_therm", ""},
		{8, "Amps", "amps", ""},
		{9, "GFXPwr", "gfx_pwr", ""},
		{10, "PkgPwrL1", "pkg_pwr_l1", ""},
		{11, "PkgPwrL2", "pkg_pwr_l2", ""},
	}}, true
}

// RingLimitTable returns turbostat's table for MSR_RING_PERF_LIMIT_REASONS
// (0x6B1), which it reads on all Haswells (PLR_RING).
func RingLimitTable(family, model uint32) (LimitTable, bool) {
	m := haswellModel(family, model)
	if m == "" {
		return LimitTable{}, false
	}
	return LimitTable{Name: "turbostat Haswell ring (" + m + ")", Reasons: []LimitReason{
		{0, "PROCHOT", "prochot", ""},
		{1, "ThermStatus", "therm_status", ""},
		{6, "VR-Therm", "vr_therm", ""},
		{8, "Amps", "amps", ""},
		{10, "PkgPwrL1", "pkg_pwr_l1", ""},
		{11, "PkgPwrL2", "pkg_pwr_l2", ""},
	}}, true
}

// DecodeLimitReasons returns the names of the reasons active (bit n) and
// logged (bit n+16) in v, in the table's order. Bits the table does not
// name are left out, as turbostat does; bits 15:0 and 31:16 of v give
// them raw.
func DecodeLimitReasons(v uint64, t LimitTable) (active, logged []string) {
	for _, r := range t.Reasons {
		if bit(v, r.Bit) {
			active = append(active, r.Name)
		}
		if bit(v, r.Bit+16) {
			if r.LogName != "" {
				logged = append(logged, r.LogName)
			} else {
				logged = append(logged, r.Name)
			}
		}
	}
	return active, logged
}
