// SPDX-License-Identifier: Apache-2.0

package regs

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestRequestFrom decodes the two vendors' request registers into the one
// view. The Intel value is turbostat's line in Decoded.Text's comment; the
// AMD one is what amd-pstate writes for the full range of the 7950X's
// MSR_AMD_CPPC_CAP1 0xe295290f (highest 226, lowest 15) at EPP 0x80:
// maximum in bits 7:0, minimum in 15:8 (docs/kernel-facts.md section 2).
func TestRequestFrom(t *testing.T) {
	tests := []struct {
		addr uint32
		raw  uint64
		want Request
		ok   bool
	}{
		{0x774, 0x80002e17, Request{Min: 23, Max: 46, EPP: 0x80, HasWindow: true, HasPackageControl: true}, true},
		{0x774, 0x0000_0603_80002e17, Request{Min: 23, Max: 46, EPP: 0x80, HasWindow: true, ActivityWindow: 0x203,
			HasPackageControl: true, PackageControl: true}, true},
		{0x772, 0x0000_0403_80002e17, Request{Min: 23, Max: 46, EPP: 0x80, HasWindow: true, ActivityWindow: 0x03}, true},
		{0xC00102B3, 0x80000fe2, Request{Min: 15, Max: 226, EPP: 0x80}, true},
		{0xC00102B3, 0x40ff0fe2, Request{Min: 15, Max: 226, Desired: 255, EPP: 0x40}, true},
		{0x1B0, 6, Request{}, false},
		{0x12345, 6, Request{}, false},
	}
	for _, tt := range tests {
		got, ok := RequestFrom(tt.addr, tt.raw)
		if ok != tt.ok {
			t.Fatalf("RequestFrom(%#x, %#x) ok = %v, want %v", tt.addr, tt.raw, ok, tt.ok)
		}
		if !ok {
			continue
		}
		if got.Register.Address != tt.addr || got.Raw != tt.raw {
			t.Errorf("RequestFrom(%#x, %#x) came from %#x raw %#x", tt.addr, tt.raw, got.Register.Address, got.Raw)
		}
		if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(Request{}, "Register", "Raw")); diff != "" {
			t.Errorf("RequestFrom(%#x, %#x) -want +got:\n%s", tt.addr, tt.raw, diff)
		}
	}
	// 0x203: mantissa 3, exponent 4 (bits 9:7): 3 x 10^4 µs.
	if q, _ := RequestFrom(0x774, 0x0000_0203_00000000); q.ActivityWindowMicros() != 30000 {
		t.Errorf("ActivityWindowMicros = %d, want 30000", q.ActivityWindowMicros())
	}
}

// TestRoles checks the lookups by role that callers use instead of
// addresses.
func TestRoles(t *testing.T) {
	names := func(rs []*Register) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Name)
		}
		return out
	}
	if diff := cmp.Diff([]string{"IA32_HWP_REQUEST", "MSR_AMD_CPPC_REQ"}, names(Requests())); diff != "" {
		t.Errorf("Requests() -want +got:\n%s", diff)
	}
	if RequestOf(Intel).Address != 0x774 || RequestOf(AMD).Address != 0xC00102B3 || EPB().Address != 0x1B0 {
		t.Errorf("RequestOf(Intel), RequestOf(AMD), EPB() = %#x, %#x, %#x", RequestOf(Intel).Address, RequestOf(AMD).Address, EPB().Address)
	}
	want := []string{"IA32_ENERGY_PERF_BIAS", "IA32_PACKAGE_THERM_STATUS", "MSR_PKG_POWER_LIMIT", "MSR_CORE_PERF_LIMIT_REASONS",
		"IA32_HWP_REQUEST", "IA32_HWP_STATUS", "MSR_AMD_CPPC_REQ"}
	if diff := cmp.Diff(want, names(Sampled())); diff != "" {
		t.Errorf("Sampled() -want +got:\n%s", diff)
	}
	for _, r := range All() {
		if r.Role == RoleOther {
			t.Errorf("%s has no role", r.Name)
		}
		if _, ok := RequestFrom(r.Address, 0); ok != (r.Role == RoleRequest || r.Role == RolePackageRequest) {
			t.Errorf("%s (role %s): RequestFrom ok = %v", r.Name, r.Role, ok)
		}
	}
}

// TestExtend adds a register the catalog lacks and finds it by address,
// name, role and in Sampled, decoded from its field specs; restore
// removes it.
func TestExtend(t *testing.T) {
	add := &Register{Name: "MSR_TEST_KNOB", Address: 0xABC, Scope: Package, Role: RoleStatus, Sampled: true,
		Fields: []FieldSpec{{Name: "knob", Hi: 15, Lo: 4}}}
	restore := Extend(add)
	r, err := Lookup("test_knob")
	if err != nil || r != add {
		t.Fatalf("Lookup after Extend = %v, %v", r, err)
	}
	if d := r.Decode(0x1234, nil); d.Text() != "MSR_TEST_KNOB: 0x00001234 (knob 291)" {
		t.Errorf("decode of 0x1234: %q, want knob 0x123 = 291", d.Text())
	}
	if s := Sampled(); s[len(s)-2] != add {
		t.Errorf("Sampled() lacks the new register: %v", s)
	}
	restore()
	if _, ok := ByAddress(0xABC); ok {
		t.Error("register still there after restore")
	}
}

// TestRequestFromVectors reads every published request value of the
// vector files (turbostat's and x86_energy_perf_policy's decodes, the
// AMD rdmsr line) through RequestFrom: its min, max, desired, EPP and
// activity window are the published fields.
func TestRequestFromVectors(t *testing.T) {
	n := 0
	for _, f := range []string{"testdata/registers.tsv", "testdata/vectors-extra.tsv"} {
		for _, v := range readVectors(t, f) {
			r, err := Lookup(v.reg)
			if err != nil {
				t.Fatalf("%s:%d: %v", v.file, v.line, err)
			}
			raw, err := strconv.ParseUint(strings.TrimPrefix(v.raw, "0x"), 16, 64)
			if err != nil {
				t.Fatalf("%s:%d: %v", v.file, v.line, err)
			}
			q, ok := RequestFrom(r.Address, raw)
			if !ok {
				continue
			}
			n++
			got := map[string]any{"min": float64(q.Min), "max": float64(q.Max), "desired": float64(q.Desired), "epp": float64(q.EPP)}
			if q.HasWindow {
				got["activity_window"] = float64(q.ActivityWindowMicros())
			}
			for k, g := range got {
				if w, ok := v.want[k]; ok && w != g {
					t.Errorf("%s:%d %s %s: %s %v, published %v", v.file, v.line, v.reg, v.raw, k, g, w)
				}
			}
		}
	}
	if n < 5 {
		t.Errorf("%d request vectors read, want the published ones (at least 5)", n)
	}
}
