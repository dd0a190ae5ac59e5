// SPDX-License-Identifier: Apache-2.0

// Package rowindex keeps per-CPU state for readers of a recording's
// sample rows. The rows of a run keep their CPU order from batch to
// batch, so a row's state is found by its position, and the map by CPU
// is consulted only when the order changes: no map lookup per row.
package rowindex

// Index maps CPU ids to their state, remembering the state of each row
// position of the last sample. The zero value is ready to use.
type Index[T any] struct {
	// ByCPU holds every CPU's state; read it, add to it through At.
	ByCPU map[int]*T
	rows  []*T
	ids   []int
}

// At returns the state of CPU cpu, seen at row position i; a CPU seen
// for the first time gets newT(cpu).
func (x *Index[T]) At(i, cpu int, newT func(cpu int) *T) *T {
	if i < len(x.rows) && x.ids[i] == cpu && x.rows[i] != nil {
		return x.rows[i] // inlined: the common case costs no call
	}
	return x.find(i, cpu, newT)
}

// find is At when row position i held another CPU, or none, last time.
func (x *Index[T]) find(i, cpu int, newT func(cpu int) *T) *T {
	if x.ByCPU == nil {
		x.ByCPU = map[int]*T{}
	}
	v := x.ByCPU[cpu]
	if v == nil {
		v = newT(cpu)
		x.ByCPU[cpu] = v
	}
	for len(x.rows) <= i {
		x.rows = append(x.rows, nil)
		x.ids = append(x.ids, 0)
	}
	x.rows[i], x.ids[i] = v, cpu
	return v
}
