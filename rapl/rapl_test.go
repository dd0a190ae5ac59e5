// SPDX-License-Identifier: Apache-2.0

package rapl

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Expected values are turbostat's decodes of the same raw values (sources
// as in regs/testdata: turbostat.8 man page, Whiskey Lake, Arrow Lake
// linux-acpi 2025-12-14, Haswell-ULT forum posts, Ryzen 9 7950X).

var intelUnit = DecodePowerUnit(0x000a0e03)

func TestDecodePowerUnit(t *testing.T) {
	tests := []struct {
		raw  uint64
		want PowerUnit
		src  string
	}{
		{0x000a0e03, PowerUnit{PowerBits: 3, EnergyBits: 14, TimeBits: 10, Power: 0.125, Energy: 0.00006103515625, Time: 0.0009765625},
			`man: "(0.125000 Watts, 0.000061 Joules, 0.000977 sec.)"`},
		{0x000a1000, PowerUnit{PowerBits: 0, EnergyBits: 16, TimeBits: 10, Power: 1, Energy: 0.0000152587890625, Time: 0.0009765625},
			`Ryzen 9 7950X: "MSR_RAPL_PWR_UNIT: 0x000a1000 (1.000000 Watts, 0.000015 Joules, 0.000977 sec.)"`},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, DecodePowerUnit(tt.raw)); diff != "" {
			t.Errorf("DecodePowerUnit(%#x) [%s] -want +got:\n%s", tt.raw, tt.src, diff)
		}
	}
}

func TestDecodePowerInfo(t *testing.T) {
	tests := []struct {
		raw  uint64
		want PowerInfo
		src  string
	}{
		{0x168, PowerInfo{TDP: 45}, `man: "(45 W TDP, RAPL 0 - 0 W, 0.000000 sec.)"`},
		{0x78, PowerInfo{TDP: 15}, `WHL: "(15 W TDP, RAPL 0 - 0 W, 0.000000 sec.)"`},
		{0x120000000001b8, PowerInfo{TDP: 55, MaxWindow: 0.017578125}, `ARL: "(55 W TDP, RAPL 0 - 0 W, 0.017578 sec.)"`},
		{0x5c, PowerInfo{TDP: 11.5}, `HSWF: "(12 W TDP, ...)" printed with %.0f`},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, DecodePowerInfo(tt.raw, intelUnit)); diff != "" {
			t.Errorf("DecodePowerInfo(%#x) [%s] -want +got:\n%s", tt.raw, tt.src, diff)
		}
	}
}

func TestDecodePowerLimit(t *testing.T) {
	lim := func(w float64, en, clamp bool, s float64, y, f uint8) Limit {
		return Limit{Power: w, Enabled: en, Clamp: clamp, Window: s, WindowY: y, WindowF: f}
	}
	tests := []struct {
		raw  uint64
		want PowerLimit
		src  string
	}{
		{0x42820800218208, PowerLimit{PL1: lim(65, true, true, 64, 16, 0), PL2: lim(65, true, false, 0.00244140625, 1, 1)},
			`man: "#1: ENabled (65.000 Watts, 64.000000 sec, clamp ENabled)" / "#2: ENabled (65.000 Watts, 0.002441* sec, clamp DISabled)"`},
		{0x420198009c8198, PowerLimit{PL1: lim(51, true, false, 24, 14, 2), PL2: lim(51, false, false, 0.00244140625, 1, 1)},
			`WHL: "#1: ENabled (51.000000 Watts, 24.000000 sec, clamp DISabled)" / "#2: DISabled (51.000000 Watts, 0.002441* sec, clamp DISabled)"`},
		{0x438500001f8640, PowerLimit{PL1: lim(200, true, true, 32, 15, 0), PL2: lim(160, true, true, 0.00244140625, 1, 1)},
			`ARL: "#1: ENabled (200.000 Watts, 32.000000 sec, clamp ENabled)" / "#2: ENabled (160.000 Watts, 0.002441* sec, clamp ENabled)" (UNlocked)`},
		{0x804280c800dd805c, PowerLimit{PL1: lim(11.5, true, true, 28, 14, 3), PL2: lim(25, true, false, 0.00244140625, 1, 1), Locked: true},
			`HSWF: "(locked)" "#1: ENabled (11.500000 Watts, 28.000000 sec, clamp ENabled)" / "#2: ENabled (25.000000 Watts, 0.002441* sec, clamp DISabled)"`},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, DecodePowerLimit(tt.raw, intelUnit)); diff != "" {
			t.Errorf("DecodePowerLimit(%#x) [%s] -want +got:\n%s", tt.raw, tt.src, diff)
		}
	}
}

// TestDelta: the counter is 32 bits (Intel SDM: MSR_PKG_ENERGY_STATUS
// bits 31:0). turbostat's DELTA_WRAP32 adds 0x100000000 when the new value
// is not above the old one; Delta agrees except for equal readings, which
// it takes as no energy rather than one whole wrap.
func TestDelta(t *testing.T) {
	tests := []struct {
		prev, cur uint32
		want      uint64
	}{
		{100, 250, 150},
		{0xfffffff0, 0x10, 0x20},
		{5, 5, 0},
		{1, 0, 0xffffffff},
	}
	for _, tt := range tests {
		if got := Delta(tt.prev, tt.cur); got != tt.want {
			t.Errorf("Delta(%#x, %#x) = %#x, want %#x", tt.prev, tt.cur, got, tt.want)
		}
	}
	if got := EnergyCount(0xdeadbeef_00001234); got != 0x1234 {
		t.Errorf("EnergyCount ignores bits 63:32: got %#x", got)
	}
	// 16384 counts of 1/16384 J is one joule.
	if got := Joules(16384, intelUnit); got != 1 {
		t.Errorf("Joules = %v, want 1", got)
	}
}

// TestWrapPeriod: turbostat prints the counter range as "RAPL: %.0f sec.
// Joule Counter Range, at %.0f Watts" = 2^32 * energy unit / TDP. Published
// lines: ARL "RAPL: 4766 sec. Joule Counter Range, at 55 Watts", HSWF
// "RAPL: 22795 sec. ... at 12 Watts" (TDP 11.5 W), HSWU "RAPL: 17476 sec. ...
// at 15 Watts".
func TestWrapPeriod(t *testing.T) {
	tests := []struct {
		maxPower float64
		sec      int64
	}{
		{55, 4766},
		{11.5, 22795},
		{15, 17476},
	}
	for _, tt := range tests {
		got := WrapPeriod(intelUnit, tt.maxPower)
		if s := int64(got.Seconds() + 0.5); s != tt.sec {
			t.Errorf("WrapPeriod(%v W) = %v, turbostat says %d s", tt.maxPower, got, tt.sec)
		}
		if MayHaveWrappedAgain(got-time.Second, intelUnit, tt.maxPower) {
			t.Errorf("%v W: an interval shorter than the wrap period is not ambiguous", tt.maxPower)
		}
		if !MayHaveWrappedAgain(got, intelUnit, tt.maxPower) {
			t.Errorf("%v W: an interval of a whole wrap period is ambiguous", tt.maxPower)
		}
	}
	if !MayHaveWrappedAgain(time.Millisecond, intelUnit, 0) || WrapPeriod(intelUnit, -1) != 0 {
		t.Error("no power bound: every interval is ambiguous")
	}
}
