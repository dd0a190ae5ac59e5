// SPDX-License-Identifier: Apache-2.0

package sampler

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/hwp"
)

// TestTableLimits: Limits names the active bits of
// MSR_CORE_PERF_LIMIT_REASONS with the SDM's table (0x0C000400: PL1
// active, PL1 and PL2 logged; logs are not shown), bit numbers without a
// table; ExcMin is IA32_HWP_STATUS bit 2 (0x4 sets it, 0x1 is the
// guaranteed-change bit only), "1!" where it went from 0 to 1, "0!" where
// it was cleared, and
// SET/READ in summary rows.
func TestTableLimits(t *testing.T) {
	tab, ok := hwp.SDMCoreLimitTable(6, 0xAA)
	if !ok {
		t.Fatal("no table for Meteor Lake-L")
	}
	for _, tc := range []struct {
		name  string
		table *hwp.LimitTable
		limit uint64
		want  string
	}{
		{"SDM table", &tab, 0x0C000400, "PkgPwrL1"},
		{"no table", nil, 0x0C000402, "bit1,bit10"},
		{"nothing active", &tab, 0x0C000000, "none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := hybridSetup()
			st.HWPStatus, st.LimitTable = SrcMSR, tc.table
			r := &seqReader{setup: st, steps: []Raw{
				{CPU: []RawCPU{{HWPStatus: 0}, {HWPStatus: 0x4}}, Pkg: []RawPkg{{}}},
				{CPU: []RawCPU{{HWPStatus: 0x4}, {HWPStatus: 0x1}}, Pkg: []RawPkg{{LimitReasons: tc.limit}}},
			}}
			smp := firstSample(t, r)
			var got [][]string
			for _, l := range strings.Split(strings.TrimRight(tableRows(t, st, "Limits,ExcMin", true, &smp), "\n"), "\n") {
				got = append(got, strings.Fields(l))
			}
			want := [][]string{
				{"P", "-", "-", "-", "-", "1/1"},
				{"E", "-", "-", "-", "-", "0/1"},
				{"-", "-", "-", "-", tc.want, "1/2"},
				{"P", "0", "0", "0", tc.want, "1!"},
				{"E", "0", "8", "1", "0!"}, // bit 2 cleared (by software) since the baseline
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("rows (-want +got):\n%s", d)
			}
		})
	}
}
