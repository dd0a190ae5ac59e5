// SPDX-License-Identifier: Apache-2.0

package tracefmt

import (
	"errors"
	"slices"
	"testing"

	"github.com/hwpprobe/hwpprobe/ebpf"
)

// FuzzParseMSRFilter: ParseMSRFilter either fails with an error wrapping
// ErrBadMSR or ebpf.ErrTooManyMSRs, or gives 1 to ebpf.MaxMSRs distinct
// MSR numbers that FormatMSRs writes in a form parsing back to the same
// list.
func FuzzParseMSRFilter(f *testing.F) {
	for _, s := range []string{"HWP_REQUEST,EPB", "0x6e0", "6e0", "", ",", "0x", "0x1ffffffff", "x\ny\x1b[2J\u202e\r",
		"1,2,3,4,5,6,7,8,9,a,b,c,d,e,f,10,11", "IA32_HWP_REQUEST, 0x774 ,774"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		msrs, err := ParseMSRFilter(s)
		if err != nil {
			if !errors.Is(err, ErrBadMSR) && !errors.Is(err, ebpf.ErrTooManyMSRs) {
				t.Fatalf("ParseMSRFilter(%q): error %v wraps no sentinel", s, err)
			}
			return
		}
		if len(msrs) == 0 || len(msrs) > ebpf.MaxMSRs {
			t.Fatalf("ParseMSRFilter(%q) = %d MSRs", s, len(msrs))
		}
		seen := map[uint32]bool{}
		for _, m := range msrs {
			if seen[m] {
				t.Fatalf("ParseMSRFilter(%q) = %#x: duplicate %#x", s, msrs, m)
			}
			seen[m] = true
		}
		back, err := ParseMSRFilter(FormatMSRs(msrs))
		if err != nil || !slices.Equal(back, msrs) {
			t.Fatalf("ParseMSRFilter(%q) = %#x; FormatMSRs parses back to %#x, %v", s, msrs, back, err)
		}
	})
}
