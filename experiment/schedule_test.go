package experiment

import "testing"

func TestSchedule(t *testing.T) {
	tests := []struct {
		warmup, runs int
		order        string
		seed         uint64
		want         string
	}{
		{1, 4, OrderABBA, 0, "A(w) B(w) A B B A A B B A"},
		{0, 1, OrderABBA, 0, "A B"},
		{2, 0, OrderABBA, 0, "A(w) B(w) A(w) B(w)"},
	}
	for _, tc := range tests {
		if got := String(Schedule(tc.warmup, tc.runs, tc.order, tc.seed)); got != tc.want {
			t.Errorf("Schedule(%d, %d, %s) = %q, want %q", tc.warmup, tc.runs, tc.order, got, tc.want)
		}
	}
	// Random: seeded, a permutation of the same runs, different seeds
	// differ.
	a, b := String(Schedule(1, 8, OrderRandom, 7)), String(Schedule(1, 8, OrderRandom, 7))
	c := String(Schedule(1, 8, OrderRandom, 8))
	if a != b || a == c {
		t.Errorf("random order: seed 7 gives %q and %q, seed 8 %q", a, b, c)
	}
	n := map[int]int{}
	for _, s := range Schedule(1, 8, OrderRandom, 7) {
		if !s.Warmup {
			n[s.Side]++
		}
	}
	if n[0] != 8 || n[1] != 8 {
		t.Errorf("random order: %v runs per side, want 8 each", n)
	}
	if got := String(append(pairSlots(0), pairSlots(1)...)); got != "A B B A" {
		t.Errorf("adaptive pairs %q, want ABBA", got)
	}
}
