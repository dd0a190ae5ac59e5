// SPDX-License-Identifier: Apache-2.0

package recording

import (
	"fmt"
	"slices"
	"strconv"
)

// Column names of columnar batches (docs/recording-format.md). Figure
// columns are named "v:" plus the figure, summary rows' package figures
// "p:" plus the figure, registers "r:" plus the MSR in hex ("r:0x199" for IA32_PERF_CTL).
const (
	prefixValue    = "v:"
	prefixPkgValue = "p:"
	prefixReg      = "r:"
)

// batchEnc encodes sample and trace batches, reusing its buffers.
type batchEnc struct {
	colEnc
	cpus []*CPURow
	pkgs []*PackageRow
	sums []*SummaryRow
}

// encodeSamples returns the columnar payload of a samples record, valid
// until the next call.
func (e *batchEnc) encodeSamples(s Samples) ([]byte, error) {
	e.reset()
	e.cpus, e.pkgs, e.sums = e.cpus[:0], e.pkgs[:0], e.sums[:0]
	for i := range s.Samples {
		x := &s.Samples[i]
		for j := range x.CPUs {
			e.cpus = append(e.cpus, &x.CPUs[j])
		}
		for j := range x.Packages {
			e.pkgs = append(e.pkgs, &x.Packages[j])
		}
		for j := range x.Summaries {
			e.sums = append(e.sums, &x.Summaries[j])
		}
	}
	cpuRegs, err := regColumns(len(e.cpus), func(i int) []Reg { return e.cpus[i].Regs })
	if err != nil {
		return nil, err
	}
	pkgRegs, err := regColumns(len(e.pkgs), func(i int) []Reg { return e.pkgs[i].Regs })
	if err != nil {
		return nil, err
	}
	rows := max(len(s.Samples), len(e.cpus), len(e.pkgs), len(e.sums))
	cells := len(e.cpus)*(len(s.CPUColumns)+len(cpuRegs)) + len(e.pkgs)*(len(s.PackageColumns)+len(pkgRegs)) +
		len(e.sums)*(len(s.CPUColumns)+len(s.PackageColumns))
	if rows > maxBatchRows || cells > maxBatchCells {
		return nil, fmt.Errorf("recording: samples batch of %d rows, %d cells: %w", rows, cells, errTooLarge)
	}
	e.uvarint(uint64(s.Run))
	e.strs(s.CPUColumns)
	e.strs(s.PackageColumns)
	e.sampleTable(s.Samples)
	e.cpuTable(s.CPUColumns, cpuRegs, rowsPer(s.Samples, func(x *Sample) int { return len(x.CPUs) }))
	e.packageTable(s.PackageColumns, pkgRegs, rowsPer(s.Samples, func(x *Sample) int { return len(x.Packages) }))
	e.summaryTable(s.CPUColumns, s.PackageColumns, rowsPer(s.Samples, func(x *Sample) int { return len(x.Summaries) }))
	return e.b, nil
}

// rowsPer returns how many rows of a table each sample has, when every
// sample has as many, or else 1: the period of the table's deltas.
func rowsPer(s []Sample, rows func(*Sample) int) int {
	if len(s) == 0 {
		return 1
	}
	n := rows(&s[0])
	for i := range s {
		if rows(&s[i]) != n {
			return 1
		}
	}
	return max(n, 1)
}

func (e *batchEnc) sampleTable(s []Sample) {
	e.table(len(s), 5)
	e.ints("time_ns", len(s), 1, func(i int) int64 { return s[i].TimeNs })
	e.ints("interval_ns", len(s), 1, func(i int) int64 { return s[i].IntervalNs })
	e.ints("cpus", len(s), 1, func(i int) int64 { return int64(len(s[i].CPUs)) })
	e.ints("packages", len(s), 1, func(i int) int64 { return int64(len(s[i].Packages)) })
	e.ints("summaries", len(s), 1, func(i int) int64 { return int64(len(s[i].Summaries)) })
}

// cpuTable appends the CPU table, per rows a sample.
func (e *batchEnc) cpuTable(cols []string, regs []uint32, per int) {
	r := e.cpus
	n := len(r)
	e.table(n, 4+len(cols)+len(regs))
	e.ints("cpu", n, per, func(i int) int64 { return int64(r[i].CPU) })
	e.ints("core", n, per, func(i int) int64 { return int64(r[i].Core) })
	e.ints("package", n, per, func(i int) int64 { return int64(r[i].Package) })
	e.strings("core_type", n, func(i int) string { return r[i].CoreType })
	for j, c := range cols {
		e.floats(prefixValue+c, n, per, func(i int) Value { return r[i].Value(j) })
	}
	for _, m := range regs {
		e.uint64s(regName(m), n, per, func(i int) (uint64, bool) { return r[i].Reg(m) })
	}
}

// packageTable appends the package table, per rows a sample.
func (e *batchEnc) packageTable(cols []string, regs []uint32, per int) {
	r := e.pkgs
	n := len(r)
	e.table(n, 1+len(cols)+len(regs))
	e.ints("package", n, per, func(i int) int64 { return int64(r[i].Package) })
	for j, c := range cols {
		e.floats(prefixValue+c, n, per, func(i int) Value { return r[i].Value(j) })
	}
	for _, m := range regs {
		e.uint64s(regName(m), n, per, func(i int) (uint64, bool) { return r[i].Reg(m) })
	}
}

// summaryTable appends the summary table, per rows a sample.
func (e *batchEnc) summaryTable(cols, pkgCols []string, per int) {
	r := e.sums
	n := len(r)
	e.table(n, 2+len(cols)+len(pkgCols))
	e.strings("type", n, func(i int) string { return r[i].Type })
	e.ints("cpus", n, per, func(i int) int64 { return int64(r[i].CPUs) })
	for j, c := range cols {
		e.floats(prefixValue+c, n, per, func(i int) Value { return r[i].Value(j) })
	}
	for j, c := range pkgCols {
		e.floats(prefixPkgValue+c, n, per, func(i int) Value { return r[i].PackageValue(j) })
	}
}

func regName(msr uint32) string { return prefixReg + "0x" + strconv.FormatUint(uint64(msr), 16) }

// regColumns returns the registers of n rows in order of first
// appearance; a row holding a register twice is an error.
func regColumns(n int, regs func(int) []Reg) ([]uint32, error) {
	var out []uint32
	for i := range n {
		rs := regs(i)
		for k, g := range rs {
			if slices.ContainsFunc(rs[:k], func(h Reg) bool { return h.MSR == g.MSR }) {
				return nil, fmt.Errorf("recording: a sample row holds register %#x twice", g.MSR)
			}
			if !slices.Contains(out, g.MSR) {
				out = append(out, g.MSR)
			}
		}
	}
	return out, nil
}
