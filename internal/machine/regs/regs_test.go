// SPDX-License-Identifier: Apache-2.0

package regs

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLookupSpellings(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		// The spellings of the issue, turbostat and x86_energy_perf_policy.
		{"HWP_REQUEST", "IA32_HWP_REQUEST"},
		{"IA32_HWP_REQUEST", "IA32_HWP_REQUEST"},
		{"MSR_IA32_HWP_REQUEST", "IA32_HWP_REQUEST"},
		{"MSR_HWP_REQUEST", "IA32_HWP_REQUEST"},
		{"hwp_req", "IA32_HWP_REQUEST"},
		{"0x774", "IA32_HWP_REQUEST"},
		{"0X774", "IA32_HWP_REQUEST"},
		{" msr_hwp_request ", "IA32_HWP_REQUEST"},
		{"MSR_HWP_CAPABILITIES", "IA32_HWP_CAPABILITIES"},
		{"HWP_CAP", "IA32_HWP_CAPABILITIES"},
		{"MSR_HWP_REQUEST_PKG", "IA32_HWP_REQUEST_PKG"},
		{"MSR_PM_ENABLE", "IA32_PM_ENABLE"},
		{"MSR_IA32_ENERGY_PERF_BIAS", "IA32_ENERGY_PERF_BIAS"},
		{"EPB", "IA32_ENERGY_PERF_BIAS"},
		{"MSR_PKG_POWER_LIMIT", "MSR_PKG_POWER_LIMIT"},
		{"PKG_POWER_LIMIT", "MSR_PKG_POWER_LIMIT"},
		{"MSR_IA32_TEMPERATURE_TARGET", "MSR_TEMPERATURE_TARGET"},
		{"MSR_IA32_PACKAGE_THERM_STATUS", "IA32_PACKAGE_THERM_STATUS"},
		{"MSR_IA32_THERM_STATUS", "IA32_THERM_STATUS"},
		{"MSR_NHM_PLATFORM_INFO", ""}, // old turbostat name: not an alias
		{"MSR_PLATFORM_INFO", "MSR_PLATFORM_INFO"},
		{"AMD_RAPL_POWER_UNIT", "MSR_AMD_RAPL_POWER_UNIT"},
		{"MSR_RAPL_PWR_UNIT", "MSR_AMD_RAPL_POWER_UNIT"},
		{"0xc0010299", "MSR_AMD_RAPL_POWER_UNIT"},
		{"CPPC_REQ", "MSR_AMD_CPPC_REQ"},
		{"0xC00102B0", "MSR_AMD_CPPC_CAP1"},
		{"MSR_TURBO_RATIO_LIMIT1", "MSR_TURBO_RATIO_LIMIT1"},
		{"MSR_TURBO_RATIO_LIMIT", "MSR_TURBO_RATIO_LIMIT"},
		{"MSR_CORE_PERF_LIMIT_REASONS", "MSR_CORE_PERF_LIMIT_REASONS"},
		{"0x690", "MSR_CORE_PERF_LIMIT_REASONS_HSW"},
	}
	for _, tt := range tests {
		r, err := Lookup(tt.in)
		switch {
		case tt.want == "" && !errors.Is(err, ErrUnknown):
			t.Errorf("Lookup(%q) = %v, %v; want ErrUnknown", tt.in, r, err)
		case tt.want != "" && (err != nil || r.Name != tt.want):
			t.Errorf("Lookup(%q) = %v, %v; want %s", tt.in, r, err, tt.want)
		}
	}
}

func TestLookupErrors(t *testing.T) {
	for _, in := range []string{"", "NOPE", "0x775", "0x", "0xzz", "0x1ffffffff", "774", "HWP_REQUEST=1"} {
		r, err := Lookup(in)
		if !errors.Is(err, ErrUnknown) || r != nil {
			t.Errorf("Lookup(%q) = %v, %v; want nil and an error wrapping ErrUnknown", in, r, err)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("Lookup(%q): multi-line error %q", in, err)
		}
	}
}

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// TestCatalog checks every register: reachable by address and name, a
// decode for a few raw values whose fields have unique snake_case names
// and JSON-able values, and a text line starting with the SDM name.
func TestCatalog(t *testing.T) {
	all := All()
	if len(all) < 31 {
		t.Fatalf("%d registers, want all of docs/kernel-facts.md section 2", len(all))
	}
	for _, r := range all {
		if got, ok := ByAddress(r.Address); !ok || got != r {
			t.Errorf("ByAddress(%#x) = %v, %v", r.Address, got, ok)
		}
		if got, err := Lookup(r.Name); err != nil || got != r {
			t.Errorf("Lookup(%q) = %v, %v", r.Name, got, err)
		}
		if r.Doc == "" {
			t.Errorf("%s: no Doc", r.Name)
		}
		for _, raw := range []uint64{0, 0x80002e17, ^uint64(0)} {
			d := r.Decode(raw, nil)
			if d.Register != r.Name || d.Address != r.Address || d.Raw != raw || len(d.Fields) == 0 {
				t.Errorf("%s.Decode(%#x) = %+v", r.Name, raw, d)
				continue
			}
			seen := map[string]bool{}
			for _, f := range d.Fields {
				if !snakeCase.MatchString(f.Name) || seen[f.Name] {
					t.Errorf("%s: field name %q not snake_case or repeated", r.Name, f.Name)
				}
				seen[f.Name] = true
				switch f.Value.(type) {
				case uint64, int, float64, bool, string:
				default:
					t.Errorf("%s: field %s has type %T", r.Name, f.Name, f.Value)
				}
			}
			if !strings.HasPrefix(d.Text(), r.Name+": 0x") || strings.Contains(d.Text(), "\n") {
				t.Errorf("%s: text %q", r.Name, d.Text())
			}
			if _, err := json.Marshal(d); err != nil {
				t.Errorf("%s: %v", r.Name, err)
			}
		}
		for _, u := range r.Uses {
			if _, ok := ByAddress(u); !ok && u != CPUSignature {
				t.Errorf("%s uses %#x, which is not in the catalog", r.Name, u)
			}
		}
	}
}

// TestAssumptions: a decode that lacks a context register says what it
// assumed, and one that has it says nothing.
func TestAssumptions(t *testing.T) {
	tests := []struct {
		reg  string
		raw  uint64
		ctx  Context
		want []string
	}{
		{"MSR_PKG_POWER_LIMIT", 0x42820800218208, nil, []string{"MSR_RAPL_POWER_UNIT not given: assumed 0xa0e03 (1/8 W, 61 µJ, 977 µs)"}},
		{"MSR_PKG_POWER_LIMIT", 0x42820800218208, Context{0x606: 0xa0e03}, nil},
		{"IA32_PACKAGE_THERM_STATUS", 0x88200800, nil, []string{"TjMax not given (MSR_TEMPERATURE_TARGET): assumed 100 C"}},
		{"IA32_THERM_STATUS", 0x08200800, Context{0x1a2: 0x640000}, []string{"Reading_Valid (bit 31) is clear: the readout may be stale"}},
		{"MSR_AMD_PKG_ENERGY_STATUS", 0x10, nil, []string{"MSR_AMD_RAPL_POWER_UNIT not given: assumed 0xa1000 (1 W, 15.3 µJ, 977 µs)"}},
		{"MSR_CORE_PERF_LIMIT_REASONS", 0x400, Context{CPUSignature: Signature(6, 0x45)}, []string{
			"bit meanings are model-specific and turbostat names none for 0x64f: raw bits only (turbostat's MSR_CORE_PERF_LIMIT_REASONS lines are register 0x690: decode them as 0x690=VALUE)"}},
		{"0x690", 0x400, nil, []string{"CPU model not given: bit meanings are model-specific, raw bits only"}},
		{"0x690", 0x400, Context{CPUSignature: Signature(6, 0x8e)}, []string{
			"no bit table for family 6 model 0x8e (turbostat decodes this register on Haswell only): raw bits only"}},
	}
	for _, tt := range tests {
		r, _ := Lookup(tt.reg)
		if diff := cmp.Diff(tt.want, r.Decode(tt.raw, tt.ctx).Assumptions); diff != "" {
			t.Errorf("%s=%#x: assumptions -want +got:\n%s", tt.reg, tt.raw, diff)
		}
	}
}

// TestTurbostatText: the parenthesised decode matches what turbostat
// printed for the same value (sources in testdata/*.tsv), where turbostat
// prints one line per register.
func TestTurbostatText(t *testing.T) {
	tj := Context{0x1a2: 0x640000}
	tests := []struct {
		reg  string
		raw  uint64
		ctx  Context
		want string
	}{
		{"MSR_HWP_CAPABILITIES", 0x0108122e, nil, "(high 46 guar 18 eff 8 low 1)"},
		{"MSR_HWP_REQUEST", 0x80002e17, nil, "(min 23 max 46 des 0 epp 0x80 window 0x0 pkg 0x0)"},
		{"MSR_HWP_REQUEST_PKG", 0x8000ff00, nil, "(min 0 max 255 des 0 epp 0x80 window 0x0)"},
		// x86_energy_perf_policy (amd-pstate EPP patch example): "window 0x9 (9*10^0us)".
		{"MSR_HWP_REQUEST", 0x9_8000a60d, nil, "(min 13 max 166 des 0 epp 0x80 window 0x9 (9*10^0us) pkg 0x0)"},
		{"MSR_HWP_INTERRUPT", 0x1, nil, "(EN_Guaranteed_Perf_Change, Dis_Excursion_Min)"},
		{"MSR_HWP_STATUS", 0x4, nil, "(No-Guaranteed_Perf_Change, Excursion_Min)"},
		{"MSR_PM_ENABLE", 0x1, nil, "(HWP)"},
		{"MSR_IA32_ENERGY_PERF_BIAS", 0x6, nil, "(balanced)"},
		{"MSR_IA32_MISC_ENABLE", 0x00850089, nil, "(TCC EIST MWAIT PREFETCH TURBO)"},
		{"MSR_IA32_MISC_ENABLE", 0x00000001, nil, "(No-TCC No-EIST No-MWAIT PREFETCH TURBO)"},
		{"MSR_RAPL_POWER_UNIT", 0x000a0e03, nil, "(0.125000 Watts, 0.000061 Joules, 0.000977 sec.)"},
		{"MSR_RAPL_PWR_UNIT", 0x000a1000, nil, "(1.000000 Watts, 0.000015 Joules, 0.000977 sec.)"},
		{"MSR_PKG_POWER_INFO", 0x120000000001b8, Context{0x606: 0xa0e03}, "(55 W TDP, RAPL 0 - 0 W, 0.017578 sec.)"},
		{"MSR_IA32_TEMPERATURE_TARGET", 0x0d690000, nil, "(92 C) (105 default - 13 offset)"},
		{"MSR_IA32_PACKAGE_THERM_STATUS", 0x88320002, Context{0x1a2: 0x0d690000}, "(55 C)"},
		{"MSR_IA32_PACKAGE_THERM_STATUS", 0x882f080a, tj, "(53 C)"},
		{"MSR_IA32_THERM_STATUS", 0x88360800, tj, "(46 C +/- 1)"},
		{"MSR_CORE_PERF_LIMIT_REASONS_HSW", 0x04000000, Context{CPUSignature: Signature(6, 69)}, "(Active: ) (Logged: PkgPwrL1)"},
		{"0x690", 0x14000400, Context{CPUSignature: Signature(6, 69)}, "(Active: PkgPwrL1) (Logged: MultiCoreTurbo, PkgPwrL1)"},
		{"MSR_GFX_PERF_LIMIT_REASONS", 0x14001400, Context{CPUSignature: Signature(6, 69)}, "(Active: PkgPwrL1) (Logged: PkgPwrL1)"},
		{"MSR_RING_PERF_LIMIT_REASONS", 0x0c000000, Context{CPUSignature: Signature(6, 69)}, "(Active: ) (Logged: PkgPwrL1, PkgPwrL2)"},
		{"MSR_RING_PERF_LIMIT_REASONS", 0x00000000, Context{CPUSignature: Signature(6, 69)}, "(Active: ) (Logged: )"},
		{"MSR_PKG_POWER_LIMIT", 0x438500001f8640, Context{0x606: 0xa0e03},
			"(PKG Limit #1: ENabled (200.000 Watts, 32.000000 sec, clamp ENabled); PKG Limit #2: ENabled (160.000 Watts, 0.002441* sec, clamp ENabled); UNlocked)"},
	}
	for _, tt := range tests {
		r, err := Lookup(tt.reg)
		if err != nil {
			t.Fatal(err)
		}
		text := r.Decode(tt.raw, tt.ctx).Text()
		_, paren, _ := strings.Cut(text, " (")
		paren = "(" + paren
		if paren != tt.want {
			t.Errorf("%s=%#x: text %q, want %q", tt.reg, tt.raw, text, tt.want)
		}
	}
}

// TestSignature: CPUID leaf 1 EAX signatures as Intel and AMD publish them
// (i7-8565U "CPUID 806EB"; Ryzen 9 7950X family 19h model 61h, A60F12h;
// Arrow Lake 6:198 as turbostat prints "0x6:c6:2 (6:198:2)").
func TestSignature(t *testing.T) {
	tests := []struct {
		eax           uint64
		family, model uint32
	}{
		{0x806eb, 6, 0x8e},
		{0xa60f12, 0x19, 0x61},
		{0xc0662, 6, 0xc6},
	}
	for _, tt := range tests {
		f, m := FamilyModel(tt.eax)
		if f != tt.family || m != tt.model {
			t.Errorf("FamilyModel(%#x) = %#x:%#x, want %#x:%#x", tt.eax, f, m, tt.family, tt.model)
		}
		if f2, m2 := FamilyModel(Signature(tt.family, tt.model)); f2 != tt.family || m2 != tt.model {
			t.Errorf("Signature(%#x, %#x) does not round-trip: %#x:%#x", tt.family, tt.model, f2, m2)
		}
	}
}

func TestParseValue(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		err  bool
	}{
		{"0x80002e17", 0x80002e17, false},
		{"80002e17", 0x80002e17, false},         // rdmsr
		{"0000000080002e17", 0x80002e17, false}, // rdmsr -0
		{"e295290fe295290f", 0xe295290fe295290f, false},
		{"0xFFFFFFFFFFFFFFFF", ^uint64(0), false},
		{"dec:2147495447", 0x80002e17, false}, // rdmsr -d
		{"DEC:10", 10, false},
		{"0d690000", 0xd690000, false}, // hex, not decimal
		{"0x10000000000000000", 0, true},
		{"dec:18446744073709551616", 0, true},
		{"", 0, true},
		{"0x", 0, true},
		{"dec:", 0, true},
		{"0xg", 0, true},
		{"-1", 0, true},
		{"+1", 0, true},
		{"1_000", 0, true},
		{"dec:0x10", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseValue(tt.in)
		if tt.err {
			if !errors.Is(err, ErrBadValue) {
				t.Errorf("ParseValue(%q) = %#x, %v; want an error wrapping ErrBadValue", tt.in, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseValue(%q) = %#x, %v; want %#x", tt.in, got, err, tt.want)
		}
	}
}

func TestParseAssignment(t *testing.T) {
	r, v, err := ParseAssignment("msr_pkg_power_limit=0x42820800218208")
	if err != nil || r.Name != "MSR_PKG_POWER_LIMIT" || v != 0x42820800218208 {
		t.Errorf("got %v %#x %v", r, v, err)
	}
	for in, want := range map[string]error{
		"HWP_REQUEST":     ErrBadValue,
		"NOPE=1":          ErrUnknown,
		"=1":              ErrUnknown,
		"HWP_REQUEST=xyz": ErrBadValue,
	} {
		if _, _, err := ParseAssignment(in); !errors.Is(err, want) {
			t.Errorf("ParseAssignment(%q) = %v, want %v", in, err, want)
		}
	}
}

// TestEnergyUnits: energy counters take the unit from the context; the
// DRAM domain of the has_fixed_rapl_unit servers (turbostat.c: hsx, bdx,
// skx, icx, knl) counts 2^-16 J whatever MSR_RAPL_POWER_UNIT says.
func TestEnergyUnits(t *testing.T) {
	skx := Signature(6, 0x55)
	spr := Signature(6, 0x8f) // spr_features: no has_fixed_rapl_unit
	tests := []struct {
		reg  string
		raw  uint64
		ctx  Context
		want float64
	}{
		{"MSR_PKG_ENERGY_STATUS", 16384, Context{0x606: 0xa0e03}, 1},
		{"MSR_PKG_ENERGY_STATUS", 0xffffffff_00004000, Context{0x606: 0xa0e03}, 1}, // bits 63:32 reserved
		{"MSR_DRAM_ENERGY_STATUS", 65536, Context{0x606: 0xa0e03, CPUSignature: skx}, 1},
		{"MSR_DRAM_ENERGY_STATUS", 16384, Context{0x606: 0xa0e03, CPUSignature: spr}, 1},
		{"MSR_AMD_PKG_ENERGY_STATUS", 65536, Context{0xc0010299: 0xa1000}, 1},
		{"MSR_AMD_CORE_ENERGY_STATUS", 65536, nil, 1},
	}
	for _, tt := range tests {
		r, _ := Lookup(tt.reg)
		d := r.Decode(tt.raw, tt.ctx)
		if got, _ := d.Field("energy_j"); got != tt.want {
			t.Errorf("%s=%#x: energy_j %v, want %v (%q)", tt.reg, tt.raw, got, tt.want, d.Assumptions)
		}
	}
}

// TestNames requires every name completion offers to look up its own
// register, and every register to be offered.
func TestNames(t *testing.T) {
	names := Names()
	offered := map[uint32]bool{}
	for _, n := range names {
		r, err := Lookup(n)
		if err != nil {
			t.Errorf("Lookup(%q): %v", n, err)
			continue
		}
		offered[r.Address] = true
	}
	for _, r := range All() {
		if !offered[r.Address] {
			t.Errorf("%s (%#x) is not offered", r.Name, r.Address)
		}
	}
}
