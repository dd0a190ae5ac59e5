// SPDX-License-Identifier: Apache-2.0

package cpus

import (
	"errors"
	"slices"
	"testing"
)

// FuzzParse: Parse either fails with an error wrapping ErrSyntax or gives
// a sorted list without duplicates within [0, MaxCPU] whose String parses
// back to the same list.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "0", "0-3,8,10-11", " 1,1,0 \n", "3-1", "0-8191", "8192", "-", ",", "1-", "a", "0x1", "+1", "1-2-3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("Parse(%q): error %v does not wrap ErrSyntax", s, err)
			}
			return
		}
		if !slices.IsSorted(l) || len(slices.Compact(slices.Clone(l))) != len(l) {
			t.Fatalf("Parse(%q) = %v: not sorted and unique", s, l)
		}
		if len(l) > 0 && (l[0] < 0 || l[len(l)-1] > MaxCPU) {
			t.Fatalf("Parse(%q) = %v: out of [0, %d]", s, l, MaxCPU)
		}
		back, err := Parse(l.String())
		if err != nil || !slices.Equal(back, l) {
			t.Fatalf("Parse(%q) = %v; String %q parses to %v, %v", s, l, l.String(), back, err)
		}
	})
}
