// SPDX-License-Identifier: Apache-2.0

package hwp

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Sources of the expected values (raw value and the decode the kernel's
// tools printed for it):
//   man:  tools/power/x86/turbostat/turbostat.8 example output (6:9e:9)
//   WHL:  turbostat on a Whiskey Lake i7-8565U (regs/testdata)
//   GNR:  turbostat 2023.03.17 on Granite Rapids (regs/testdata)
//   ARL:  turbostat 2025.02.02 on an Arrow Lake Ultra 9 275HX, linux-acpi
//         2025-12-14 <20251214184507.21f95134@kf-m2g5>
//   JL:   turbostat, linux-pm 2021-10-28 (Julia Lawall)
//   HSWU: turbostat 4.7 on a Haswell-ULT 6:69:1, Ubuntu Forums 2015-08-23
//   SPR:  turbostat 2025.12.01 on Sapphire Rapids 6:143:8, linux-pm 2025-12-02
//   AMD:  rdmsr on an ASUS GA403UV, kernel bugzilla 218686 #51, fields as
//         arch/x86/include/asm/msr-index.h defines them for amd-pstate.

func TestDecodeRequest(t *testing.T) {
	tests := []struct {
		raw  uint64
		want Request
		src  string
	}{
		{0x00005353, Request{Min: 83, Max: 83}, `man: "(min 83 max 83 des 0 epp 0x0 window 0x0 pkg 0x0)"`},
		{0x80002e17, Request{Min: 23, Max: 46, EPP: 0x80}, `WHL: "(min 23 max 46 des 0 epp 0x80 window 0x0 pkg 0x0)"`},
		{0x000a2525, Request{Min: 37, Max: 37, Desired: 10}, `JL: "(min 37 max 37 des 10 epp 0x0 window 0x0 pkg 0x0)"`},
		{0x40003d0d, Request{Min: 13, Max: 61, EPP: 0x40}, `ARL: "(min 13 max 61 des 0 epp 0x40 window 0x0 pkg 0x0)"`},
		{0x8000ff00, Request{Min: 0, Max: 255, EPP: 0x80}, `GNR HWP_REQUEST_PKG: "(min 0 max 255 des 0 epp 0x80 window 0x0)"`},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, DecodeRequest(tt.raw)); diff != "" {
			t.Errorf("DecodeRequest(%#x) [%s] -want +got:\n%s", tt.raw, tt.src, diff)
		}
	}
}

// TestActivityWindow: the 10-bit field is a 7-bit mantissa (6:0) times 10
// to the 3-bit exponent (9:7) in µs (SDM vol. 3B 15.4.4;
// x86_energy_perf_policy prints "window 0x%x (%d*10^%dus)" from
// window & 0x7F and (window >> 7) & 0x7). turbostat prints the field
// masked with 0xff3.
func TestActivityWindow(t *testing.T) {
	tests := []struct {
		window uint64 // bits 41:32
		us     uint64
		src    string
	}{
		{0x0, 0, "0: hardware chooses (ARL, WHL: window 0x0)"},
		{0x9, 9, `amd-pstate EPP patch, x86_energy_perf_policy: "window 0x9 (9*10^0us)"`},
		{0x7f, 127, "mantissa 127, exponent 0"},
		{0x80 | 0x32, 500, "mantissa 50, exponent 1: 50*10^1"},
		{0x3 << 7, 0, "mantissa 0 with an exponent is still 0"},
		{0x3ff, 127 * 10_000_000, "mantissa 127, exponent 7: 127*10^7"},
	}
	for _, tt := range tests {
		r := DecodeRequest(tt.window << 32)
		if uint64(r.ActivityWindow) != tt.window || r.ActivityWindowMicros() != tt.us {
			t.Errorf("window %#x [%s]: field %#x, %d µs; want %#x, %d µs", tt.window, tt.src, r.ActivityWindow, r.ActivityWindowMicros(), tt.window, tt.us)
		}
	}
	// Bits 42 (package control) and 59..63 (valid bits) do not leak into the window.
	r := DecodeRequest(1<<42 | 0x1f<<59 | 0x3ff<<32)
	if want := (Request{ActivityWindow: 0x3ff, PackageControl: true, Valid: 0x1f}); r != want {
		t.Errorf("high bits: got %+v, want %+v", r, want)
	}
}

func TestDecodeCapabilities(t *testing.T) {
	tests := []struct {
		raw  uint64
		want Capabilities
		src  string
	}{
		{0x01101f53, Capabilities{Highest: 83, Guaranteed: 31, MostEfficient: 16, Lowest: 1}, `man: "(high 83 guar 31 eff 16 low 1)"`},
		{0x05081527, Capabilities{Highest: 39, Guaranteed: 21, MostEfficient: 8, Lowest: 5}, `GNR: "(high 39 guar 21 eff 8 low 5)"`},
		{0x0108122e, Capabilities{Highest: 46, Guaranteed: 18, MostEfficient: 8, Lowest: 1}, `WHL: "(high 46 guar 18 eff 8 low 1)"`},
		{0x011a203d, Capabilities{Highest: 61, Guaranteed: 32, MostEfficient: 26, Lowest: 1}, `ARL: "(high 61 guar 32 eff 26 low 1)"`},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, DecodeCapabilities(tt.raw)); diff != "" {
			t.Errorf("DecodeCapabilities(%#x) [%s] -want +got:\n%s", tt.raw, tt.src, diff)
		}
	}
}

func TestEPB(t *testing.T) {
	tests := []struct {
		raw       uint64
		epb       uint8
		kernel    string // intel_epb.c energy_perf_strings
		turbostat string // turbostat print_epb
		src       string
	}{
		{0x0, 0, "performance", "performance", `HSWU: "MSR_IA32_ENERGY_PERF_BIAS: 0x00000000 (performance)"`},
		{0x4, 4, "balance-performance", "custom", `turbostat 21.05.04 (HSWF): "EPB: 4 (custom)"`},
		{0x6, 6, "normal", "balanced", `man/WHL: "0x00000006 (balanced)"`},
		{0x8, 8, "balance-power", "custom", "intel_epb.c: ENERGY_PERF_BIAS_BALANCE_POWERSAVE"},
		{0xf, 15, "power", "powersave", "intel_epb.c: ENERGY_PERF_BIAS_POWERSAVE"},
		{0x7, 7, "", "custom", "no name in either"},
		{0xfffffff6, 6, "normal", "balanced", "bits 63:4 are reserved"},
	}
	for _, tt := range tests {
		e := DecodeEPB(tt.raw)
		if e != tt.epb || EPBName(e) != tt.kernel || EPBTurbostatName(e) != tt.turbostat {
			t.Errorf("EPB %#x [%s]: %d %q %q, want %d %q %q", tt.raw, tt.src, e, EPBName(e), EPBTurbostatName(e), tt.epb, tt.kernel, tt.turbostat)
		}
	}
}

func TestInterruptStatus(t *testing.T) {
	// IA32_HWP_INTERRUPT: turbostat tests bits 0 and 1.
	for _, tt := range []struct {
		raw  uint64
		want Interrupt
		src  string
	}{
		{0x1, Interrupt{GuaranteedPerfChange: true}, `man: "(EN_Guaranteed_Perf_Change, Dis_Excursion_Min)"`},
		{0x5, Interrupt{GuaranteedPerfChange: true, HighestChange: true}, `ARL: "0x00000005 (EN_Guaranteed_Perf_Change, Dis_Excursion_Min)"`},
		{0x0, Interrupt{}, `WHL: "(Dis_Guaranteed_Perf_Change, Dis_Excursion_Min)"`},
	} {
		if diff := cmp.Diff(tt.want, DecodeInterrupt(tt.raw)); diff != "" {
			t.Errorf("DecodeInterrupt(%#x) [%s] -want +got:\n%s", tt.raw, tt.src, diff)
		}
	}
	// IA32_HWP_STATUS: Excursion_To_Minimum is bit 2 (SDM; turbostat since
	// January 2023). Older turbostat printed "No-Excursion_Min" for 0x4.
	for _, tt := range []struct {
		raw  uint64
		want Status
		src  string
	}{
		{0x4, Status{ExcursionMin: true}, `GNR, fixed turbostat: "(No-Guaranteed_Perf_Change, Excursion_Min)"`},
		{0x0, Status{}, `ARL: "(No-Guaranteed_Perf_Change, No-Excursion_Min)"`},
		{0x2, Status{}, "bit 1 is reserved: not an excursion"},
	} {
		if diff := cmp.Diff(tt.want, DecodeStatus(tt.raw)); diff != "" {
			t.Errorf("DecodeStatus(%#x) [%s] -want +got:\n%s", tt.raw, tt.src, diff)
		}
	}
	if !DecodePMEnable(1) || DecodePMEnable(0) {
		t.Error(`DecodePMEnable: man "MSR_PM_ENABLE: 0x00000001 (HWP)"`)
	}
}

func TestPlatformAndPerf(t *testing.T) {
	for _, tt := range []struct {
		raw      uint64
		base, me uint8
		src      string
	}{
		{0x80080001800, 24, 8, `SPR: "8 * 100.0 = 800.0 MHz max efficiency" / "24 * 100.0 = 2400.0 MHz base"`},
		{0x804083cf1811f00, 31, 8, `ARL: "8 * 100.0 ... max efficiency" / "31 * 100.0 ... base"`},
		{0x6063bf3011000, 16, 6, `HSWF: "6 * 100.0 ... max efficiency" / "16 * 100.0 ... base"`},
	} {
		p := DecodePlatformInfo(tt.raw)
		if p.MaxNonTurboRatio != tt.base || p.MaxEfficiencyRatio != tt.me {
			t.Errorf("DecodePlatformInfo(%#x) [%s] = %+v", tt.raw, tt.src, p)
		}
	}
	// intel_pstate.c core_get_val(): val = pstate << 8, plus bit 32 when
	// no_turbo is set and turbo is not disabled by firmware.
	if got, want := DecodePerfCtl(24<<8|1<<32), (PerfCtl{TargetRatio: 24, TurboDisengage: true}); got != want {
		t.Errorf("DecodePerfCtl = %+v, want %+v", got, want)
	}
	if got, want := DecodePerfCtl(46<<8), (PerfCtl{TargetRatio: 46}); got != want {
		t.Errorf("DecodePerfCtl = %+v, want %+v", got, want)
	}
	// IA32_PERF_STATUS has the same ratio field, bits 15:8 (SDM vol. 4
	// table 2-2); intel_pstate's PERF_CTL value for ratio 46 reads back so.
	if got := DecodePerfStatus(46 << 8); got != 46 {
		t.Errorf("DecodePerfStatus = %d, want 46", got)
	}
}

func TestMiscEnable(t *testing.T) {
	for _, tt := range []struct {
		raw  uint64
		want MiscEnable
		src  string
	}{
		{0x00850089, MiscEnable{FastStrings: true, AutoTCC: true, PerfMon: true, EIST: true, MWAIT: true, LimitCPUID: false},
			`ARL/HSWF: "(TCC EIST MWAIT PREFETCH TURBO)"`},
		{0x00000001, MiscEnable{FastStrings: true}, `SPR: "(No-TCC No-EIST No-MWAIT PREFETCH TURBO)"`},
		{1 << 38, MiscEnable{TurboDisable: true}, "intel_pstate.c: turbo_is_disabled() tests MSR_IA32_MISC_ENABLE_TURBO_DISABLE, bit 38"},
	} {
		if diff := cmp.Diff(tt.want, DecodeMiscEnable(tt.raw)); diff != "" {
			t.Errorf("DecodeMiscEnable(%#x) [%s] -want +got:\n%s", tt.raw, tt.src, diff)
		}
	}
}

func TestThermal(t *testing.T) {
	for _, tt := range []struct {
		raw        uint64
		want       TemperatureTarget
		activation int
		src        string
	}{
		{0x00640000, TemperatureTarget{TjMax: 100}, 100, `man: "0x00640000 (100 C) (100 default - 0 offset)"`},
		{0x0d690000, TemperatureTarget{TjMax: 105, Offset: 13}, 92, `ARL: "0x0d690000 (92 C) (105 default - 13 offset)"`},
	} {
		got := DecodeTemperatureTarget(tt.raw)
		if got != tt.want || int(got.TjMax)-int(got.Offset) != tt.activation {
			t.Errorf("DecodeTemperatureTarget(%#x) [%s] = %+v", tt.raw, tt.src, got)
		}
	}
	for _, tt := range []struct {
		raw   uint64
		tjMax uint8
		temp  int
		res   uint8
		valid bool
		src   string
	}{
		{0x88200800, 100, 68, 1, true, `man: "MSR_IA32_PACKAGE_THERM_STATUS: 0x88200800 (68 C)"`},
		{0x882f080a, 100, 53, 1, true, `WHL: "0x882f080a (53 C)"`},
		{0x88320002, 105, 55, 1, true, `ARL: "0x88320002 (55 C)" with TjMax 105 and offset 13 not subtracted`},
		{0x88360800, 100, 46, 1, true, `HSWU: "MSR_IA32_THERM_STATUS: 0x88360800 (46 C +/- 1)"`},
		{0x88380000, 100, 44, 1, true, `HSWU: "MSR_IA32_THERM_STATUS: 0x88380000 (44 C +/- 1)"`},
	} {
		s := DecodeThermStatus(tt.raw)
		if got := Temperature(tt.tjMax, s.Readout); got != tt.temp || s.Resolution != tt.res || s.ReadingValid != tt.valid {
			t.Errorf("DecodeThermStatus(%#x) [%s]: %d C +/- %d valid %v", tt.raw, tt.src, got, s.Resolution, s.ReadingValid)
		}
	}
	// Status and log bits: 0x882f080a has bits 1, 3 and 11 set (logs of
	// thermal, PROCHOT and power limitation), bit 31 valid.
	want := ThermStatus{ThermalLog: true, PROCHOTLog: true, PowerLimitLog: true, Readout: 0x2f, Resolution: 1, ReadingValid: true}
	if diff := cmp.Diff(want, DecodeThermStatus(0x882f080a)); diff != "" {
		t.Errorf("DecodeThermStatus(0x882f080a) -want +got:\n%s", diff)
	}
}

func TestTurboRatioLimit(t *testing.T) {
	got := DecodeTurboRatioLimit(0x2728292a)
	want := []TurboGroup{{1, 42}, {2, 41}, {3, 40}, {4, 39}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf(`man "42 * 100.0 = 4200.0 MHz max turbo 1 active cores" ... -want +got:\n%s`, diff)
	}
	got = DecodeTurboRatioGroups(0x2020212123242526, 0x302e2c2a26221e18)
	want = []TurboGroup{{24, 38}, {30, 37}, {34, 36}, {38, 35}, {42, 33}, {44, 33}, {46, 32}, {48, 32}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf(`SPR "38 * 100.0 = 3800.0 MHz max turbo 24 active cores" ... -want +got:\n%s`, diff)
	}
}

func TestCPPC(t *testing.T) {
	for _, tt := range []struct {
		raw  uint64
		want CPPCCap1
	}{
		{0xe295290f, CPPCCap1{Highest: 226, Nominal: 149, LowestNonlinear: 41, Lowest: 15}},
		{0xd095290fd095290f, CPPCCap1{Highest: 208, Nominal: 149, LowestNonlinear: 41, Lowest: 15}},
	} {
		if diff := cmp.Diff(tt.want, DecodeCPPCCap1(tt.raw)); diff != "" {
			t.Errorf("AMD: DecodeCPPCCap1(%#x) -want +got:\n%s", tt.raw, diff)
		}
	}
	if got := DecodeCPPCReq(0); got != (CPPCReq{}) {
		t.Errorf("AMD: DecodeCPPCReq(0) = %+v", got)
	}
	// amd-pstate (drivers/cpufreq/amd-pstate.c) composes the request with
	// FIELD_PREP on AMD_CPPC_MAX_PERF_MASK (7:0), MIN (15:8), DES (23:16)
	// and EPP (31:24): max 166, min 13, des 0, epp 128 as
	// x86_energy_perf_policy's AMD patch example shows.
	if got, want := DecodeCPPCReq(128<<24|0<<16|13<<8|166), (CPPCReq{Max: 166, Min: 13, EPP: 128}); got != want {
		t.Errorf("DecodeCPPCReq = %+v, want %+v", got, want)
	}
	if !DecodeCPPCEnable(1) || DecodeCPPCEnable(0) {
		t.Error(`AMD: "sudo rdmsr 0xc00102b1 -a" 1 is enabled, 0 is not`)
	}
}

// TestLimitReasons: turbostat's tables, with the lines it printed on a
// Haswell-ULT (6:69:1) in HSWU and HSWF (turbostat 21.05.04).
func TestLimitReasons(t *testing.T) {
	core, ok1 := CoreLimitTable(6, 0x45)
	gfx, ok2 := GfxLimitTable(6, 0x45)
	ring, ok3 := RingLimitTable(6, 0x45)
	if !ok1 || !ok2 || !ok3 {
		t.Fatal("no table for Haswell-L")
	}
	tests := []struct {
		table          LimitTable
		raw            uint64
		active, logged []string
		src            string
	}{
		{core, 0x14000400, []string{"PkgPwrL1"}, []string{"MultiCoreTurbo", "PkgPwrL1"}, `HSWF: "(Active: PkgPwrL1, ) (Logged: MultiCoreTurbo, PkgPwrL1, )"`},
		{core, 0x04000000, nil, []string{"PkgPwrL1"}, `HSWU: "(Active: ) (Logged: PkgPwrL1, )"`},
		{core, 0x00000000, nil, nil, `HSWU: "(Active: ) (Logged: )"`},
		{gfx, 0x14001400, []string{"PkgPwrL1"}, []string{"PkgPwrL1"}, `HSWF: "(Active: PkgPwrL1, ) (Logged: PkgPwrL1, )"`},
		{gfx, 0x10000000, nil, nil, `HSWU: "MSR_GFX_PERF_LIMIT_REASONS, 0x10000000 (Active: ) (Logged: )"`},
		{ring, 0x0c000000, nil, []string{"PkgPwrL1", "PkgPwrL2"}, `HSWU: "(Active: ) (Logged: PkgPwrL1, PkgPwrL2, )"`},
	}
	for _, tt := range tests {
		a, l := DecodeLimitReasons(tt.raw, tt.table)
		if diff := cmp.Diff([][]string{tt.active, tt.logged}, [][]string{a, l}); diff != "" {
			t.Errorf("%s %#x [%s] -want +got:\n%s", tt.table.Name, tt.raw, tt.src, diff)
		}
	}
	// turbostat reads the graphics register on client Haswells only, and
	// none of the three on other models.
	if _, ok := GfxLimitTable(6, 0x3f); ok {
		t.Error("Haswell-X has no graphics limit reasons in turbostat (hsx_features: PLR_CORE | PLR_RING)")
	}
	for _, m := range []uint32{0x8e, 0x55, 0xc6} {
		if _, ok := CoreLimitTable(6, m); ok {
			t.Errorf("model %#x: turbostat has no core table", m)
		}
	}
}

// TestTurboRatioLimit1Layout: turbostat.c platform_features, trl_msrs:
// TRL_CORECOUNT for skx/icx/spr, TRL_LIMIT1 for ivx/hsx, TRL_BASE only for
// the clients (hsw, skl, adl ...).
func TestTurboRatioLimit1Layout(t *testing.T) {
	for _, tt := range []struct {
		model uint32
		want  TRL1Layout
	}{
		{0x55, TRL1CoreCounts}, {0x6A, TRL1CoreCounts}, {0x8F, TRL1CoreCounts},
		{0x3E, TRL1Ratios9To16}, {0x3F, TRL1Ratios9To16},
		{0x45, TRL1Unknown}, {0x9A, TRL1Unknown},
	} {
		if got := TurboRatioLimit1Layout(6, tt.model); got != tt.want {
			t.Errorf("model %#x: %v, want %v", tt.model, got, tt.want)
		}
	}
	if TurboRatioLimit1Layout(0x19, 0x61) != TRL1Unknown {
		t.Error("AMD family 0x19 has no MSR_TURBO_RATIO_LIMIT1")
	}
}

// TestEPBNormal: the kernel's "normal" is 7 on the models of
// intel_epb.c's intel_epb_normal[] (ALDERLAKE_L 0x9A, ATOM_GRACEMONT 0xBE,
// RAPTORLAKE_P 0xBA) and 6 elsewhere (Meteor Lake 0xAA is not listed).
func TestEPBNormal(t *testing.T) {
	tests := []struct {
		family, model uint32
		normal        uint8
		name6, name7  string
	}{
		{6, 0x9A, 7, "", "normal"},
		{6, 0xBE, 7, "", "normal"},
		{6, 0xBA, 7, "", "normal"},
		{6, 0xAA, 6, "normal", ""},
		{6, 0x8F, 6, "normal", ""},
		{0x19, 0x61, 6, "normal", ""},
	}
	for _, tt := range tests {
		n := EPBNormal(tt.family, tt.model)
		if n != tt.normal || EPBNameFor(6, n) != tt.name6 || EPBNameFor(7, n) != tt.name7 {
			t.Errorf("%d:%#x: normal %d, names %q %q; want %d %q %q", tt.family, tt.model, n,
				EPBNameFor(6, n), EPBNameFor(7, n), tt.normal, tt.name6, tt.name7)
		}
	}
}

// TestEPBValue: every name energy_perf_bias accepts maps back to the value
// EPBNameFor names (intel_epb.c energy_perf_strings[]/energ_perf_values[]).
func TestEPBValue(t *testing.T) {
	for _, normal := range []uint8{EPBNormalDefault, EPBNormalPowersave} {
		for _, name := range []string{"performance", "balance-performance", "normal", "balance-power", "power"} {
			v, ok := EPBValue(name, normal)
			if !ok || EPBNameFor(v, normal) != name {
				t.Errorf("normal %d: EPBValue(%q) = %d, %v; named back %q", normal, name, v, ok, EPBNameFor(v, normal))
			}
		}
	}
	if v, _ := EPBValue("normal", EPBNormalPowersave); v != 7 {
		t.Errorf(`EPBValue("normal", 7) = %d`, v)
	}
	if _, ok := EPBValue("balanced", EPBNormalDefault); ok {
		t.Error(`"balanced" (turbostat's word) accepted: the kernel does not`)
	}
}
