// SPDX-License-Identifier: Apache-2.0

package recording

import "slices"

// RegColumn is one register of a samples batch's CPU rows, column by
// column: row i is the batch's i-th CPU row, counting sample after
// sample.
type RegColumn struct {
	MSR    uint32
	Values []uint64 // by row; 0 where the row lacks the register
	Has    []bool   // by row, whether it has the register; nil when every row has it
	// Period, when not 0, says what the batch's encoding tells of the
	// values: each row from Period on holds the value of the row Period
	// before it, but for the rows in Changes (ascending), which may
	// differ; a reader need not compare the others. 0 when not known.
	Period  int
	Changes []int
}

// RegColumnsOf returns the registers of the CPU rows of samples as
// columns, in the order they first appear; a row that holds a register
// twice gives its last value.
func RegColumnsOf(samples []Sample) []RegColumn {
	n := 0
	var out []RegColumn
	for _, s := range samples {
		for _, r := range s.CPUs {
			for _, g := range r.Regs {
				if !slices.ContainsFunc(out, func(c RegColumn) bool { return c.MSR == g.MSR }) {
					out = append(out, RegColumn{MSR: g.MSR})
				}
			}
			n++
		}
	}
	for k := range out {
		c := &out[k]
		c.Values, c.Has = make([]uint64, n), make([]bool, n)
		i, all := 0, true
		for _, s := range samples {
			for _, r := range s.CPUs {
				for _, g := range r.Regs {
					if g.MSR == c.MSR {
						c.Values[i], c.Has[i] = g.Value, true
					}
				}
				all = all && c.Has[i]
				i++
			}
		}
		if all {
			c.Has = nil
		}
	}
	return out
}
