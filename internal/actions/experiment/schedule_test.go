// SPDX-License-Identifier: Apache-2.0

package experiment

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSchedule(t *testing.T) {
	tests := []struct {
		n, warmup, runs int
		order           string
		seed            uint64
		want            string
	}{
		{2, 1, 4, OrderABBA, 0, "A(w) B(w) A B B A A B B A"},
		{2, 0, 1, OrderABBA, 0, "A B"},
		{2, 2, 0, OrderABBA, 0, "A(w) B(w) A(w) B(w)"},
		{3, 1, 2, OrderABBA, 0, "A(w) B(w) C(w) A B C B C A"},
		{4, 0, 2, OrderABBA, 0, "A B D C B C A D"},
	}
	for _, tc := range tests {
		if got := String(Schedule(tc.n, tc.warmup, tc.runs, tc.order, tc.seed)); got != tc.want {
			t.Errorf("Schedule(%d, %d, %d, %s) = %q, want %q", tc.n, tc.warmup, tc.runs, tc.order, got, tc.want)
		}
	}
	// Random: seeded, a permutation of the same runs, different seeds
	// differ, each block holds every side once.
	for _, n := range []int{2, 3, 5} {
		a, b := String(Schedule(n, 1, 8, OrderRandom, 7)), String(Schedule(n, 1, 8, OrderRandom, 7))
		c := String(Schedule(n, 1, 8, OrderRandom, 8))
		if a != b || a == c {
			t.Errorf("n=%d random order: seed 7 gives %q and %q, seed 8 %q", n, a, b, c)
		}
		s := Schedule(n, 1, 8, OrderRandom, 7)[n:]
		for blk := 0; blk < len(s); blk += n {
			seen := map[int]bool{}
			for _, x := range s[blk : blk+n] {
				seen[x.Side] = true
			}
			if len(seen) != n {
				t.Errorf("n=%d random order: block %d is %q, not every side once", n, blk/n, String(s[blk:blk+n]))
			}
		}
	}
	if got := String(append(pairSlots(0), pairSlots(1)...)); got != "A B B A" {
		t.Errorf("adaptive pairs %q, want ABBA", got)
	}
}

// TestWilliams checks the Williams property: every row is a permutation,
// and over the rows each ordered pair of distinct sides is adjacent
// equally often (once for even n, twice for odd n).
func TestWilliams(t *testing.T) {
	for _, tc := range []struct{ n, rows, each int }{
		{2, 2, 1}, {3, 6, 2}, {4, 4, 1}, {5, 10, 2}, {6, 6, 1}, {7, 14, 2}, {8, 8, 1},
	} {
		rows := Williams(tc.n)
		if len(rows) != tc.rows {
			t.Errorf("Williams(%d): %d rows, want %d", tc.n, len(rows), tc.rows)
		}
		got, want := map[[2]int]int{}, map[[2]int]int{}
		for a := range tc.n {
			for b := range tc.n {
				if a != b {
					want[[2]int{a, b}] = tc.each
				}
			}
		}
		for _, r := range rows {
			seen := map[int]bool{}
			for k, v := range r {
				seen[v] = true
				if k > 0 {
					got[[2]int{r[k-1], v}]++
				}
			}
			if len(seen) != tc.n {
				t.Errorf("Williams(%d): row %v is not a permutation", tc.n, r)
			}
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("Williams(%d) %v: adjacent ordered pairs (-want +got):\n%s", tc.n, rows, d)
		}
	}
}
