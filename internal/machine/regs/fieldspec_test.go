// SPDX-License-Identifier: Apache-2.0

package regs

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/rapl"
)

// specs reads one raw value through a register's FieldSpecs and notes
// which fields were read.
type specs struct {
	t    *testing.T
	r    *Register
	raw  uint64
	used map[string]bool
}

func (s specs) get(name string) uint64 {
	s.t.Helper()
	for _, f := range s.r.Fields {
		if f.Name == name {
			if s.used != nil {
				s.used[name] = true
			}
			return f.Extract(s.raw)
		}
	}
	s.t.Fatalf("%s has no field spec %s", s.r.Name, name)
	return 0
}

// ctxSpecs reads the context register at addr through its FieldSpecs,
// def standing in when ctx lacks it (as the decoders assume).
func ctxSpecs(t *testing.T, ctx Context, addr uint32, def uint64) specs {
	t.Helper()
	r, ok := ByAddress(addr)
	if !ok {
		t.Fatalf("no register %#x", addr)
	}
	v, ok := ctx[addr]
	if !ok {
		v = def
	}
	return specs{t: t, r: r, raw: v}
}

// units returns watts, joules and seconds per count of a RAPL unit
// register read through its FieldSpecs.
func units(u specs) (power, energy, time float64) {
	return math.Ldexp(1, -int(u.get("power_units"))), math.Ldexp(1, -int(u.get("energy_units"))),
		math.Ldexp(1, -int(u.get("time_units")))
}

// derived gives, by register, the decoder fields computed from bit
// fields (and the context) rather than being one, by the formulas of
// docs/decode.md "Fields".
var derived = map[string]func(t *testing.T, s specs, ctx Context) map[string]any{
	"IA32_HWP_REQUEST":     hwpWindow,
	"IA32_HWP_REQUEST_PKG": hwpWindow,
	"MSR_TEMPERATURE_TARGET": func(_ *testing.T, s specs, _ Context) map[string]any {
		return map[string]any{"tcc_activation_c": int(s.get("tjmax_c")) - int(s.get("offset_c"))}
	},
	"IA32_THERM_STATUS":         thermal,
	"IA32_PACKAGE_THERM_STATUS": thermal,
	"MSR_RAPL_POWER_UNIT":       unitFields,
	"MSR_AMD_RAPL_POWER_UNIT":   unitFields,
	"MSR_PKG_POWER_INFO": func(t *testing.T, s specs, ctx Context) map[string]any {
		p, _, tu := units(ctxSpecs(t, ctx, rapl.MSR_RAPL_POWER_UNIT, rapl.DefaultPowerUnitRaw))
		return map[string]any{"tdp_w": float64(s.get("tdp")) * p, "min_power_w": float64(s.get("min_power")) * p,
			"max_power_w": float64(s.get("max_power")) * p, "max_window_s": float64(s.get("max_window")) * tu}
	},
	"MSR_PKG_POWER_LIMIT": func(t *testing.T, s specs, ctx Context) map[string]any {
		p, _, tu := units(ctxSpecs(t, ctx, rapl.MSR_RAPL_POWER_UNIT, rapl.DefaultPowerUnitRaw))
		m := map[string]any{}
		for _, l := range []string{"pl1_", "pl2_"} {
			m[l+"w"] = float64(s.get(l+"power")) * p
			m[l+"time_s"] = (1 + float64(s.get(l+"time_f"))/4) * math.Ldexp(1, int(s.get(l+"time_y"))) * tu
		}
		return m
	},
	"MSR_PKG_ENERGY_STATUS":      energy,
	"MSR_DRAM_ENERGY_STATUS":     energy,
	"MSR_PP0_ENERGY_STATUS":      energy,
	"MSR_PP1_ENERGY_STATUS":      energy,
	"MSR_PLATFORM_ENERGY_STATUS": energy,
	"MSR_AMD_CORE_ENERGY_STATUS": energy,
	"MSR_AMD_PKG_ENERGY_STATUS":  energy,
	"MSR_TURBO_RATIO_LIMIT": func(t *testing.T, s specs, ctx Context) map[string]any {
		if _, ok := ctx[hwp.MSR_TURBO_RATIO_LIMIT1]; !ok || trl1Ratios(ctx) {
			return nil // ratio_Nc: the fields themselves
		}
		// Groups with a non-zero ratio, numbered as turbostat lists them.
		counts := ctxSpecs(t, ctx, hwp.MSR_TURBO_RATIO_LIMIT1, 0)
		m, n := map[string]any{}, 0
		for i := 1; i <= 8; i++ {
			r := s.get(fmt.Sprintf("ratio_%dc", i))
			if r == 0 {
				continue
			}
			n++
			m[fmt.Sprintf("group%d_ratio", n)] = r
			m[fmt.Sprintf("group%d_cores", n)] = counts.get(fmt.Sprintf("group%d_cores", i))
		}
		return m
	},
	"MSR_TURBO_RATIO_LIMIT1": func(_ *testing.T, s specs, ctx Context) map[string]any {
		if !trl1Ratios(ctx) {
			return nil
		}
		m := map[string]any{}
		for i := 1; i <= 8; i++ {
			m[fmt.Sprintf("ratio_%dc", i+8)] = s.get(fmt.Sprintf("group%d_cores", i))
		}
		return m
	},
}

// trl1Ratios reports whether the context's CPU reads MSR_TURBO_RATIO_LIMIT1
// as ratios for 9-16 cores (Ivy Bridge-EP, Haswell-EP).
func trl1Ratios(ctx Context) bool {
	sig, ok := ctx[CPUSignature]
	return ok && hwp.TurboRatioLimit1Layout(FamilyModel(sig)) == hwp.TRL1Ratios9To16
}

func hwpWindow(_ *testing.T, s specs, _ Context) map[string]any {
	w := s.get("activity_window")
	us := w & 0x7f
	for e := w >> 7 & 7; e > 0; e-- {
		us *= 10
	}
	return map[string]any{"activity_window_us": us}
}

func thermal(t *testing.T, s specs, ctx Context) map[string]any {
	tj := uint64(DefaultTjMax)
	if _, ok := ctx[hwp.MSR_TEMPERATURE_TARGET]; ok {
		if v := ctxSpecs(t, ctx, hwp.MSR_TEMPERATURE_TARGET, 0).get("tjmax_c"); v != 0 {
			tj = v
		}
	}
	return map[string]any{"tjmax_c": int(tj), "temperature_c": int(tj) - int(s.get("readout_c"))}
}

func unitFields(_ *testing.T, s specs, _ Context) map[string]any {
	p, e, tu := units(s)
	return map[string]any{"power_unit_w": p, "energy_unit_j": e, "time_unit_s": tu}
}

func energy(t *testing.T, s specs, ctx Context) map[string]any {
	def := uint64(rapl.DefaultPowerUnitRaw)
	if s.r.Uses[0] == rapl.MSR_AMD_RAPL_POWER_UNIT {
		def = DefaultAMDPowerUnitRaw
	}
	_, e, _ := units(ctxSpecs(t, ctx, s.r.Uses[0], def))
	if sig, ok := ctx[CPUSignature]; ok && s.r.Address == rapl.MSR_DRAM_ENERGY_STATUS && fixedDRAMUnit(FamilyModel(sig)) {
		e = 1.0 / 65536
	}
	return map[string]any{"energy_j": float64(s.get("energy_count")) * e}
}

// names are decoder fields that are words, not numbers from bits.
var names = map[string]bool{"epb_name": true, "table": true}

// number gives a decoded value in one form for comparison: flags as 0/1,
// non-negative ints as uint64.
func number(v any) any {
	switch x := v.(type) {
	case bool:
		if x {
			return uint64(1)
		}
		return uint64(0)
	case int:
		if x >= 0 {
			return uint64(x)
		}
	}
	return v
}

// checkFields compares every field r's decoder gives for raw under ctx
// with the same field read through r's FieldSpecs, or computed from them
// (derived). A limit-reason register's active_bits and logged_bits are
// compared on the bits its specs name.
func checkFields(t *testing.T, where string, r *Register, raw uint64, ctx Context, used map[string]bool) {
	t.Helper()
	s := specs{t: t, r: r, raw: raw, used: used}
	d := r.Decode(raw, ctx)
	got, want := map[string]any{}, map[string]any{}
	for _, f := range d.Fields {
		if !names[f.Name] {
			got[f.Name] = number(f.Value)
		}
	}
	for _, f := range r.Fields {
		if _, ok := got[f.Name]; ok {
			want[f.Name] = s.get(f.Name)
		}
	}
	if fn := derived[r.Name]; fn != nil {
		for k, v := range fn(t, s, ctx) {
			want[k] = number(v)
		}
	}
	if r.Role == RoleLimitReasons {
		var active, logged, mask uint64
		for _, f := range r.Fields {
			if f.Lo < 16 {
				active |= s.get(f.Name) << f.Lo
				mask |= 1 << f.Lo
			} else {
				logged |= s.get(f.Name) << (f.Lo - 16)
			}
		}
		got["active_bits"] = got["active_bits"].(uint64) & mask
		got["logged_bits"] = got["logged_bits"].(uint64) & mask
		want["active_bits"], want["logged_bits"] = active, logged
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: %s=%#x: fields through the FieldSpecs -want, the decoder +got:\n%s", where, r.Name, raw, diff)
	}
}

// TestFieldSpecVectors reads every real value of testdata/ through its
// register's FieldSpecs and compares each field with the decoder's.
func TestFieldSpecVectors(t *testing.T) {
	for _, file := range []string{"testdata/registers.tsv", "testdata/vectors-extra.tsv"} {
		for _, v := range readVectors(t, file) {
			r, err := Lookup(v.reg)
			if err != nil {
				t.Fatalf("%s:%d: %v", v.file, v.line, err)
			}
			raw, err := ParseValue(v.raw)
			if err != nil {
				t.Fatalf("%s:%d: %v", v.file, v.line, err)
			}
			ctx := parseContext(t, v)
			checkFields(t, file+":"+strconv.Itoa(v.line), r, raw, ctx, nil)
			// The context registers are real values too.
			for addr, cv := range ctx {
				if cr, ok := ByAddress(addr); ok {
					checkFields(t, file+":"+strconv.Itoa(v.line)+" (context)", cr, cv, nil, nil)
				}
			}
		}
	}
}

// TestFieldSpecPatterns compares the FieldSpecs with the decoders of every
// register, including those without a testdata value, on bit patterns
// (all zeros, all ones, alternating bits, request and power-limit values)
// without and with context (a Haswell-ULT, an Ivy Bridge-EP with TjMax 0,
// a Skylake-X: their tables and layouts differ), and checks that every
// FieldSpec was compared with something the decoder gives.
func TestFieldSpecPatterns(t *testing.T) {
	ctxs := []Context{nil,
		{CPUSignature: Signature(6, 0x45), hwp.MSR_TEMPERATURE_TARGET: 0x0d690000, rapl.MSR_RAPL_POWER_UNIT: 0x000a0e03,
			hwp.MSR_TURBO_RATIO_LIMIT1: 0x302e2c2a26221e18, rapl.MSR_AMD_RAPL_POWER_UNIT: 0x000a1000},
		{CPUSignature: Signature(6, 0x3E), hwp.MSR_TEMPERATURE_TARGET: 0, hwp.MSR_TURBO_RATIO_LIMIT1: 0x2122232425262728},
		{CPUSignature: Signature(6, 0x55)}, // Skylake-X: fixed DRAM energy unit
	}
	raws := []uint64{0, ^uint64(0), 0x0000_0603_80ff2e17, 0x5555_5555_5555_5555, 0xaaaa_aaaa_aaaa_aaaa, 0x804280c800dd805c}
	for _, r := range All() {
		used := map[string]bool{}
		for i, ctx := range ctxs {
			for _, raw := range raws {
				checkFields(t, "context "+strconv.Itoa(i), r, raw, ctx, used)
			}
		}
		for _, f := range r.Fields {
			if !used[f.Name] {
				t.Errorf("%s: field spec %s is compared with nothing the decoder gives", r.Name, f.Name)
			}
		}
	}
}

// TestFieldSpecLayout checks that every register lists its fields, in
// bits 63:0, without overlap, under unique snake_case names.
func TestFieldSpecLayout(t *testing.T) {
	for _, r := range All() {
		if len(r.Fields) == 0 {
			t.Errorf("%s: no field specs", r.Name)
		}
		var taken uint64
		seen := map[string]bool{}
		for _, f := range r.Fields {
			if f.Hi < f.Lo || f.Hi > 63 {
				t.Errorf("%s.%s: bits %d:%d do not fit in 64 bits", r.Name, f.Name, f.Hi, f.Lo)
				continue
			}
			m := ^uint64(0) >> (63 - f.Hi) &^ (1<<f.Lo - 1)
			if taken&m != 0 {
				t.Errorf("%s.%s: bits %d:%d overlap another field (mask %#x)", r.Name, f.Name, f.Hi, f.Lo, taken&m)
			}
			taken |= m
			if !snakeCase.MatchString(f.Name) || seen[f.Name] {
				t.Errorf("%s: field name %q not snake_case or repeated", r.Name, f.Name)
			}
			seen[f.Name] = true
			for _, a := range f.Aliases {
				if strings.TrimSpace(a) == "" {
					t.Errorf("%s.%s: empty alias", r.Name, f.Name)
				}
			}
		}
	}
}

// TestLimitReasonFields checks the *_PERF_LIMIT_REASONS specs against
// package hwp's tables: each named bit at its place under the table's
// name, turbostat's word as the status bit's alias and its log word as
// the log bit's.
func TestLimitReasonFields(t *testing.T) {
	tables := []struct {
		reg   string
		table func(family, model uint32) (hwp.LimitTable, bool)
		model uint32
	}{
		{"MSR_CORE_PERF_LIMIT_REASONS", hwp.SDMCoreLimitTable, 0x8E},
		{"MSR_CORE_PERF_LIMIT_REASONS_HSW", hwp.CoreLimitTable, 0x3C},
		{"MSR_GFX_PERF_LIMIT_REASONS", hwp.GfxLimitTable, 0x45},
		{"MSR_RING_PERF_LIMIT_REASONS", hwp.RingLimitTable, 0x3F},
	}
	for _, tt := range tables {
		r, err := Lookup(tt.reg)
		if err != nil {
			t.Fatal(err)
		}
		tab, ok := tt.table(6, tt.model)
		if !ok {
			t.Fatalf("%s: no table for 6:%#x", tt.reg, tt.model)
		}
		type bit struct {
			Name    string
			Bit     uint8
			Aliases []string
		}
		var want, got []bit
		for _, b := range tab.Reasons {
			if b.JSON == "" {
				continue
			}
			log := b.LogName
			if log == "" {
				log = b.Name
			}
			alias := func(a string) []string {
				if tt.reg == "MSR_CORE_PERF_LIMIT_REASONS" && !turbostatWord[a] {
					return nil // hwp's own short form, not a tool's word
				}
				return []string{a}
			}
			want = append(want, bit{b.JSON, uint8(b.Bit), alias(b.Name)}, bit{b.JSON + "_log", uint8(b.Bit + 16), alias(log)})
		}
		for _, f := range r.Fields {
			if f.Hi != f.Lo {
				t.Errorf("%s.%s: %d:%d is not one bit", r.Name, f.Name, f.Hi, f.Lo)
			}
			got = append(got, bit{f.Name, f.Lo, f.Aliases})
		}
		less := func(a, b bit) bool { return a.Bit < b.Bit }
		if diff := cmp.Diff(want, got, cmpopts.SortSlices(less), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: field specs -%s +catalog:\n%s", r.Name, tab.Name, diff)
		}
	}
}

// turbostatWord holds the words turbostat prints for Haswell limit
// reasons (its print_perf_limit), which hwp.SDMCoreLimitTable reuses for
// bits of the same meaning.
var turbostatWord = map[string]bool{"PROCHOT": true, "ThermStatus": true, "VR-Therm": true, "PkgPwrL1": true,
	"PkgPwrL2": true, "MultiCoreTurbo": true, "Transitions": true}
