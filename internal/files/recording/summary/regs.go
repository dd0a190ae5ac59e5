// SPDX-License-Identifier: Apache-2.0

package summary

import (
	"cmp"
	"slices"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/rowindex"
)

// regTracker notes, per CPU, each sampled register value that differs
// from the one before. Most samples hold the CPUs of the sample before,
// in the same order, each once: such a sample is compared column by
// column with the values the tracker remembers per row position, and
// only a changed value goes on to the CPU's history. Any other sample
// goes through the CPUs' histories row by row.
type regTracker struct {
	cpus   rowindex.Index[cpuRegs]
	layout []int                 // CPU by row position, of the last sample
	unique bool                  // no CPU twice in layout
	last   map[uint32]*posValues // by register
}

// posValues are one register's values by row position in the last
// sample; ok is false where that is not known, allOK says it is known
// everywhere.
type posValues struct {
	v     []uint64
	ok    []bool
	allOK bool
}

// add notes the registers of one sample's CPU rows, which are rows
// from, from+1, ... of the batch's register columns; sameCPUs says that
// they are the CPUs of the sample before, in its order (the batch's
// encoding tells).
func (t *regTracker) add(rows []recording.CPURow, cols []recording.RegColumn, from int, sameCPUs bool) {
	fast := t.unique && len(rows) == len(t.layout)
	if !sameCPUs {
		fast = t.sameLayout(rows)
	}
	for j := range cols {
		c := &cols[j]
		last := t.values(c.MSR, len(rows))
		vals := c.Values[from : from+len(rows)]
		var has []bool
		if c.Has != nil {
			has = c.Has[from : from+len(rows)]
		}
		lastV, lastOK := last.v[:len(vals)], last.ok[:len(vals)]
		if fast && has == nil && last.allOK {
			if c.Period == len(rows) && from >= c.Period {
				// The encoding tells which rows may differ from the
				// sample before, whose values lastV holds.
				t.changed(c, j, rows, from, lastV)
				continue
			}
			if slices.Equal(vals, lastV) {
				continue // the usual sample: no register of the column changed
			}
		}
		last.allOK = has == nil
		for i, v := range vals {
			switch {
			case fast && has == nil && lastV[i] == v && lastOK[i]: // most
			case has != nil && !has[i]:
			case fast && lastV[i] == v && lastOK[i]:
			default:
				t.note(i, rows[i].CPU, j, c.MSR, v)
				lastV[i], lastOK[i] = v, true
			}
			last.allOK = last.allOK && lastOK[i]
		}
	}
}

// changed notes the values of column j, the j-th of the sample's whose
// rows are from, from+1, ..., that differ from lastV among the rows the
// column's Changes name.
func (t *regTracker) changed(c *recording.RegColumn, j int, rows []recording.CPURow, from int, lastV []uint64) {
	lo, _ := slices.BinarySearch(c.Changes, from)
	for _, r := range c.Changes[lo:] {
		i := r - from
		if i >= len(rows) {
			break
		}
		if v := c.Values[r]; v != lastV[i] {
			t.note(i, rows[i].CPU, j, c.MSR, v)
			lastV[i] = v
		}
	}
}

// sameLayout reports whether rows hold the CPUs of the last sample in
// the same order, each once; when they do not, it forgets the values by
// row position and takes rows as the layout.
func (t *regTracker) sameLayout(rows []recording.CPURow) bool {
	if len(rows) == len(t.layout) {
		layout, i := t.layout[:len(rows)], 0
		for i < len(rows) && rows[i].CPU == layout[i] {
			i++
		}
		if i == len(rows) {
			return t.unique
		}
	}
	t.layout, t.unique = t.layout[:0], true
	seen := make(map[int]bool, len(rows))
	for _, r := range rows {
		t.layout = append(t.layout, r.CPU)
		t.unique = t.unique && !seen[r.CPU]
		seen[r.CPU] = true
	}
	for _, p := range t.last {
		clear(p.ok)
		p.allOK = false
	}
	return false
}

// values returns a register's values by row position, for n positions.
func (t *regTracker) values(msr uint32, n int) *posValues {
	p := t.last[msr]
	if p == nil {
		if t.last == nil {
			t.last = map[uint32]*posValues{}
		}
		p = &posValues{}
		t.last[msr] = p
	}
	for len(p.v) < n {
		p.v, p.ok, p.allOK = append(p.v, 0), append(p.ok, false), false
	}
	return p
}

// note adds a value of register msr (column j) of CPU cpu, at row
// position i, to the CPU's history unless it is the last one there.
func (t *regTracker) note(i, cpu, j int, msr uint32, v uint64) {
	r := t.cpus.At(i, cpu, newCPURegs).reg(j, msr)
	if n := len(r.values); n == 0 || r.values[n-1] != v {
		r.values = append(r.values, v)
	}
}

// cpuRegs are one CPU's sampled registers, each with its successive
// distinct values.
type cpuRegs struct {
	cpu  int
	regs []regValues
}

type regValues struct {
	msr    uint32
	values []uint64
}

func newCPURegs(id int) *cpuRegs { return &cpuRegs{cpu: id} }

// reg returns the register msr, looked for at position j first.
func (c *cpuRegs) reg(j int, msr uint32) *regValues {
	if j < len(c.regs) && c.regs[j].msr == msr {
		return &c.regs[j]
	}
	for k := range c.regs {
		if c.regs[k].msr == msr {
			return &c.regs[k]
		}
	}
	c.regs = append(c.regs, regValues{msr: msr})
	return &c.regs[len(c.regs)-1]
}

// changes returns the registers whose value changed on a CPU.
func (t *regTracker) changes() []RegChange {
	var out []RegChange
	for _, c := range t.cpus.ByCPU {
		for _, r := range c.regs {
			if len(r.values) > 1 {
				out = append(out, RegChange{MSR: r.msr, Name: RegName(r.msr), CPU: c.cpu, Values: slices.Clone(r.values)})
			}
		}
	}
	slices.SortFunc(out, func(a, b RegChange) int { return cmp.Or(cmp.Compare(a.MSR, b.MSR), cmp.Compare(a.CPU, b.CPU)) })
	return out
}
