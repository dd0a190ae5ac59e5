// SPDX-License-Identifier: Apache-2.0

package rowindex

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

type state struct{ cpu, rows int }

func newState(cpu int) *state { return &state{cpu: cpu} }

// TestAt: the same CPU gets the same state whatever its row position, a
// changed order is followed, and every CPU is in ByCPU once.
func TestAt(t *testing.T) {
	var x Index[state]
	for _, order := range [][]int{{0, 4, 12}, {0, 4, 12}, {4, 0}, {0, 4, 12, 7}} {
		for i, cpu := range order {
			s := x.At(i, cpu, newState)
			if s.cpu != cpu {
				t.Fatalf("row %d cpu %d: state of cpu %d", i, cpu, s.cpu)
			}
			s.rows++
		}
	}
	got := map[int]int{}
	for cpu, s := range x.ByCPU {
		got[cpu] = s.rows
	}
	if diff := cmp.Diff(map[int]int{0: 4, 4: 4, 12: 3, 7: 1}, got); diff != "" {
		t.Errorf("rows per CPU (-want +got):\n%s", diff)
	}
}

// TestAtAllocs: rows in an unchanged order cost no allocation.
func TestAtAllocs(t *testing.T) {
	var x Index[state]
	order := []int{3, 1, 2}
	for i, cpu := range order {
		x.At(i, cpu, newState)
	}
	if n := testing.AllocsPerRun(100, func() {
		for i, cpu := range order {
			x.At(i, cpu, newState)
		}
	}); n != 0 {
		t.Errorf("%v allocations per sample in an unchanged order", n)
	}
}
