// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// decodeJSON is the shape `hwpprobe decode --json` prints.
type decodeJSON struct {
	Register    string         `json:"register"`
	Address     string         `json:"address"`
	Raw         string         `json:"raw"`
	Fields      map[string]any `json:"fields"`
	Assumptions []string       `json:"assumptions"`
	Text        string         `json:"text"`
}

// TestDecodeJSON runs the binary on published values (sources in
// regs/testdata/registers.tsv: turbostat.8 man page, Whiskey Lake and
// Ryzen 9 7950X turbostat dumps; bugzilla 218686 for the rdmsr-style AMD
// value) and checks the JSON the issue specifies: one element per argument,
// in argument order, with context applied across arguments.
func TestDecodeJSON(t *testing.T) {
	stdout, stderr, code := runBin(t, "decode", "--json",
		"MSR_PKG_POWER_LIMIT=0x420198009c8198",
		"msr_rapl_power_unit=0x000a0e03",
		"0x774=80002e17",
		"IA32_PACKAGE_THERM_STATUS=0x882f080a",
		"MSR_IA32_TEMPERATURE_TARGET=0x00640000",
		"0xc00102b0=e295290fe295290f",
	)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	checkSchema(t, "hwpprobe-decode/1", []byte(stdout))
	var got []decodeJSON
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("output is not a JSON array: %v\n%s", err, stdout)
	}
	want := []decodeJSON{
		{Register: "MSR_PKG_POWER_LIMIT", Address: "0x610", Raw: "0x420198009c8198", Fields: map[string]any{
			"pl1_w": 51.0, "pl1_enabled": true, "pl1_clamp": false, "pl1_time_s": 24.0,
			"pl2_w": 51.0, "pl2_enabled": false, "pl2_clamp": false, "pl2_time_s": 0.00244140625, "locked": false}},
		{Register: "MSR_RAPL_POWER_UNIT", Address: "0x606", Raw: "0xa0e03", Fields: map[string]any{
			"power_unit_w": 0.125, "energy_unit_j": 0.00006103515625, "time_unit_s": 0.0009765625}},
		{Register: "IA32_HWP_REQUEST", Address: "0x774", Raw: "0x80002e17", Fields: map[string]any{
			"min": 23.0, "max": 46.0, "desired": 0.0, "epp": 128.0, "activity_window": 0.0,
			"activity_window_us": 0.0, "package_control": 0.0}},
		{Register: "IA32_PACKAGE_THERM_STATUS", Address: "0x1b1", Raw: "0x882f080a", Fields: map[string]any{"temperature_c": 53.0}},
		{Register: "MSR_TEMPERATURE_TARGET", Address: "0x1a2", Raw: "0x640000", Fields: map[string]any{"tjmax_c": 100.0, "offset_c": 0.0}},
		{Register: "MSR_AMD_CPPC_CAP1", Address: "0xc00102b0", Raw: "0xe295290fe295290f", Fields: map[string]any{
			"highest": 226.0, "nominal": 149.0, "lowest_nonlinear": 41.0, "lowest": 15.0}},
	}
	if len(got) != len(want) {
		t.Fatalf("%d elements, want %d:\n%s", len(got), len(want), stdout)
	}
	for i := range want {
		// Compare the listed fields only; extra fields are allowed.
		sub := map[string]any{}
		for k := range want[i].Fields {
			sub[k] = got[i].Fields[k]
		}
		g := got[i]
		g.Fields, g.Text = sub, ""
		if len(g.Assumptions) != 0 {
			t.Errorf("%s: assumptions %q although the context was given", g.Register, g.Assumptions)
		}
		g.Assumptions = nil
		if diff := cmp.Diff(want[i], g); diff != "" {
			t.Errorf("element %d -want +got:\n%s", i, diff)
		}
	}
}

// TestDecodeText checks the text blocks: the turbostat-wording line of each
// register (turbostat.8 man page values) and the stated assumption when a
// context register is missing.
func TestDecodeText(t *testing.T) {
	stdout, stderr, code := runBin(t, "decode", "HWP_REQUEST=0x00005353", "IA32_PACKAGE_THERM_STATUS=0x88200800",
		"MSR_PKG_POWER_INFO=0x168", "IA32_HWP_CAPABILITIES=0x01101f53")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, line := range []string{
		"IA32_HWP_REQUEST: 0x00005353 (min 83 max 83 des 0 epp 0x0 window 0x0 pkg 0x0)",
		"IA32_PACKAGE_THERM_STATUS: 0x88200800 (68 C)",
		"  note: TjMax not given (MSR_TEMPERATURE_TARGET): assumed 100 C",
		"MSR_PKG_POWER_INFO: 0x00000168 (45 W TDP, RAPL 0 - 0 W, 0.000000 sec.)",
		"  note: MSR_RAPL_POWER_UNIT not given: assumed 0xa0e03 (1/8 W, 61 µJ, 977 µs)",
		"IA32_HWP_CAPABILITIES: 0x01101f53 (high 83 guar 31 eff 16 low 1)",
	} {
		if !strings.Contains(stdout, line+"\n") {
			t.Errorf("output lacks %q:\n%s", line, stdout)
		}
	}
	if n := strings.Count(stdout, "\n\n"); n != 3 {
		t.Errorf("%d blank lines between blocks, want 3 (4 blocks):\n%s", n, stdout)
	}
}

// TestDecodeCPU checks --cpu: with a Haswell model the limit reasons of
// 0x690 (turbostat's MSR_CORE_PERF_LIMIT_REASONS) are named as turbostat
// 21.05.04 printed them for 0x14000400 on a 6:69:1
// ("Active: PkgPwrL1" / "Logged: MultiCoreTurbo, PkgPwrL1"); without it only
// raw bits are given, with the assumption said.
func TestDecodeCPU(t *testing.T) {
	stdout, _, code := runBin(t, "decode", "--cpu", "6:69", "0x690=0x14000400")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if want := "MSR_CORE_PERF_LIMIT_REASONS_HSW: 0x14000400 (Active: PkgPwrL1) (Logged: MultiCoreTurbo, PkgPwrL1)\n"; !strings.HasPrefix(stdout, want) {
		t.Errorf("got\n%s\nwant first line %q", stdout, want)
	}
	stdout, _, code = runBin(t, "decode", "0x690=0x14000400")
	if code != 0 || !strings.Contains(stdout, "Active: 0x0400, Logged: 0x1400") || !strings.Contains(stdout, "note: CPU model not given") {
		t.Errorf("exit %d, output\n%s", code, stdout)
	}
}

// TestDecodeErrors: every bad input exits 2 with one line on stderr and
// nothing on stdout.
func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		args []string
		msg  string // part of the message
	}{
		{[]string{"decode"}, "at least one REG=VALUE"},
		{[]string{"decode", "NO_SUCH_REG=0x1"}, "unknown register"},
		{[]string{"decode", "0x775=0x1"}, "unknown register"},
		{[]string{"decode", "HWP_REQUEST"}, "want REG=VALUE"},
		{[]string{"decode", "HWP_REQUEST="}, "no digits"},
		{[]string{"decode", "HWP_REQUEST=0x"}, "no digits"},
		{[]string{"decode", "HWP_REQUEST=0x1ffffffffffffffff"}, "wider than 64 bits"},
		{[]string{"decode", "HWP_REQUEST=12345678901234567"}, "wider than 64 bits"},
		{[]string{"decode", "HWP_REQUEST=0xzz"}, "not a hexadecimal number"},
		{[]string{"decode", "HWP_REQUEST=-1"}, "not a hexadecimal number"},
		{[]string{"decode", "HWP_REQUEST=dec:12ab"}, "not a decimal number"},
		{[]string{"decode", "EPB=6", "HWP_REQUEST=oops"}, "not a hexadecimal number"},
		{[]string{"decode", "MSR_RAPL_POWER_UNIT=0xa0e03", "MSR_RAPL_POWER_UNIT=0xa1003", "MSR_PKG_POWER_LIMIT=0x1"}, "given twice"},
		{[]string{"decode", "--cpu", "6", "EPB=6"}, "want FAMILY:MODEL"},
		{[]string{"decode", "--cpu", "6:x", "EPB=6"}, "not a number"},
		{[]string{"decode", "--list", "EPB=6"}, "--list takes no arguments"},
		{[]string{"decode", "--no-such-flag", "EPB=6"}, "unknown flag"},
	}
	for _, tt := range tests {
		stdout, stderr, code := runBin(t, tt.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2", tt.args, code)
		}
		if stdout != "" {
			t.Errorf("%v: printed %q on stdout", tt.args, stdout)
		}
		if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "hwpprobe: ") || !strings.Contains(stderr, tt.msg) {
			t.Errorf("%v: stderr %q, want one line containing %q", tt.args, stderr, tt.msg)
		}
	}
}

// TestDecodeValueForms: the same register value as rdmsr prints it (plain
// hex, zero-padded with -0), with 0x, and in decimal with dec: decodes alike.
func TestDecodeValueForms(t *testing.T) {
	var texts []string
	for _, v := range []string{"0x80002e17", "80002e17", "0000000080002e17", "0X80002E17", "dec:2147495447"} {
		stdout, stderr, code := runBin(t, "decode", "--json", "IA32_HWP_REQUEST="+v)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", v, code, stderr)
		}
		var got []decodeJSON
		if err := json.Unmarshal([]byte(stdout), &got); err != nil || len(got) != 1 {
			t.Fatalf("%s: %v\n%s", v, err, stdout)
		}
		texts = append(texts, got[0].Text)
	}
	for _, s := range texts[1:] {
		if s != texts[0] {
			t.Errorf("decodes differ: %q vs %q", s, texts[0])
		}
	}
}

// TestDecodeList: --list names every register of docs/kernel-facts.md section 2.
func TestDecodeList(t *testing.T) {
	stdout, _, code := runBin(t, "decode", "--list")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, a := range []string{"0x770", "0x771", "0x772", "0x773", "0x774", "0x777", "0x1b0", "0xe7", "0xe8", "0xce",
		"0x198", "0x199", "0x19c", "0x1a0", "0x1a2", "0x1ad", "0x1b1", "0x606", "0x610", "0x611", "0x619", "0x639",
		"0x641", "0x64d", "0x64f", "0x690", "0x6b0", "0x6b1", "0xc00102b0", "0xc00102b1", "0xc00102b3", "0xc0010299", "0xc001029a", "0xc001029b"} {
		if !strings.Contains(stdout, "\n"+a+" ") {
			t.Errorf("--list lacks %s", a)
		}
	}
}
