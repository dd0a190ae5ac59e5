// SPDX-License-Identifier: Apache-2.0

package hwp

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSDMCoreLimitTable: the table's bits are the SDM's for MSR 64FH on
// the 6th generation Intel Core processors, as EDK II transcribes them
// (UefiCpuPkg/Include/Register/Intel/Msr/SkylakeMsr.h,
// MSR_SKYLAKE_CORE_PERF_LIMIT_REASONS_REGISTER: status bits 0, 1, 4-8,
// 10-13, each with its log 16 bits up; 2, 3, 9, 14 and 15 reserved).
func TestSDMCoreLimitTable(t *testing.T) {
	tab, ok := SDMCoreLimitTable(6, 0xAA) // Meteor Lake-L (Core Ultra 7 165U)
	if !ok {
		t.Fatal("no table for Meteor Lake-L")
	}
	sdm := map[uint]string{0: "PROCHOT_Status", 1: "ThermalStatus", 4: "ResidencyStateRegulationStatus",
		5: "RunningAverageThermalLimitStatus", 6: "VRThermAlertStatus", 7: "VRThermDesignCurrentStatus", 8: "OtherStatus",
		10: "PL1Status", 11: "PL2Status", 12: "MaxTurboLimitStatus", 13: "TurboTransitionAttenuationStatus"}
	got := map[uint]bool{}
	for _, r := range tab.Reasons {
		if _, ok := sdm[r.Bit]; !ok {
			t.Errorf("%s at bit %d: reserved in the SDM", r.Name, r.Bit)
		}
		got[r.Bit] = true
	}
	for b, n := range sdm {
		if !got[b] {
			t.Errorf("SDM bit %d (%s) not in the table", b, n)
		}
	}
	tests := []struct {
		raw            uint64
		active, logged []string
	}{
		// PL1 holding the frequency, PL1 and PL2 logged.
		{0x0C000400, []string{"PkgPwrL1"}, []string{"PkgPwrL1", "PkgPwrL2"}},
		{0x08000800, []string{"PkgPwrL2"}, []string{"PkgPwrL2"}},
		{0x00020002, []string{"ThermStatus"}, []string{"ThermStatus"}},
		{1<<2 | 1<<9 | 1<<15 | 1<<18, nil, nil}, // reserved bits only
		{0, nil, nil},
	}
	for _, tt := range tests {
		a, l := DecodeLimitReasons(tt.raw, tab)
		if d := cmp.Diff([][]string{tt.active, tt.logged}, [][]string{a, l}); d != "" {
			t.Errorf("%#x (-want +got):\n%s", tt.raw, d)
		}
	}
	for _, fm := range [][2]uint32{{6, 0x45}, {6, 0x8F}, {0x19, 0x11}} {
		if _, ok := SDMCoreLimitTable(fm[0], fm[1]); ok {
			t.Errorf("family %d model %#x: a client table for a part it does not describe", fm[0], fm[1])
		}
	}
}

// TestLimitReasonNames: without a table the set status bits (15:0) and
// log bits (31:16) are named by their status bit's number; with one, the
// table's names (0x0C000400 on Meteor Lake-L: PL1 active, PL1 and PL2
// logged).
func TestLimitReasonNames(t *testing.T) {
	tab, _ := SDMCoreLimitTable(6, 0xAA)
	tests := []struct {
		raw            uint64
		table          *LimitTable
		active, logged []string
	}{
		{0x0C000402, nil, []string{"bit1", "bit10"}, []string{"bit10", "bit11"}},
		{0x80008000, nil, []string{"bit15"}, []string{"bit15"}},
		{0, nil, nil, nil},
		{0x0C000400, &tab, []string{"PkgPwrL1"}, []string{"PkgPwrL1", "PkgPwrL2"}},
	}
	for _, tt := range tests {
		a, l := LimitReasonNames(tt.raw, tt.table)
		if d := cmp.Diff([][]string{tt.active, tt.logged}, [][]string{a, l}); d != "" {
			t.Errorf("%#x (table %v) (-want +got):\n%s", tt.raw, tt.table != nil, d)
		}
	}
}
