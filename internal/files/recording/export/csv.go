// SPDX-License-Identifier: Apache-2.0

// Package export writes a recording's samples in formats other tools read.
package export

import (
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/files/recording/summary"
)

// Row kinds, the "row" column.
const (
	RowCPU     = "cpu"
	RowPackage = "package"
	RowSummary = "summary"
)

// FixedColumns returns the columns that open every CSV row; the turbostat
// figure columns and the register columns follow them (docs/export.md).
func FixedColumns() []string {
	return []string{"run", "side", "time", "elapsed_s", "interval_s", "row", "Type", "Package", "Core", "CPU"}
}

// WriteCSV writes one row per (sample, CPU), per (sample, package) and per
// (sample, summary row) of every run of rec. Figure columns are the union
// of the runs' columns, named as turbostat names them; a figure that was
// not measured, or does not apply to the row, is an empty field. Raw
// registers follow as hex, in columns named after the register.
func WriteCSV(w io.Writer, rec *recording.Recording) error {
	return writeWhole(rec, func(l *layout) rowSink { return newCSV(w, l) })
}

// WriteCSVFile writes the CSV of the recording at path, as WriteCSV would,
// reading the file twice batch by batch (recording.ScanFile: the columns,
// then the rows) so that memory does not grow with the recording. Rows
// come in file order, which is run order in the files hwpprobe writes. A
// path that is not a regular file (a pipe) is read once, its bytes kept as
// stored for the second scan. It returns the recording read (without
// samples), whose Issue says what was lost.
func WriteCSVFile(w io.Writer, path string) (*recording.Recording, error) {
	return scanTwice(path, func(l *layout) rowSink { return newCSV(w, l) })
}

// layout is what the header needs: the figure columns of the runs, and
// every register read.
type layout struct {
	cpuCols, pkgCols []string
	cpuRegs, pkgRegs []uint32
}

func (l *layout) addRegs(s recording.Sample) {
	for _, c := range s.CPUs {
		for _, g := range c.Regs {
			l.cpuRegs = addReg(l.cpuRegs, g.MSR)
		}
	}
	for _, p := range s.Packages {
		for _, g := range p.Regs {
			l.pkgRegs = addReg(l.pkgRegs, g.MSR)
		}
	}
}

// addBatch adds the registers of a batch scanned with
// recording.PartCPURegColumns and PartPackages.
func (l *layout) addBatch(b recording.Samples) {
	for _, c := range b.CPURegs {
		if c.Has == nil && len(c.Values) > 0 || slices.Contains(c.Has, true) {
			l.cpuRegs = addReg(l.cpuRegs, c.MSR)
		}
	}
	for _, s := range b.Samples {
		l.addRegs(s)
	}
}

// columns sets the figure columns from the runs' and returns the header.
func (l *layout) columns(runs []*recording.Run) *layout {
	for _, run := range runs {
		l.cpuCols = union(l.cpuCols, run.CPUColumns)
		l.pkgCols = union(l.pkgCols, run.PackageColumns)
	}
	return l
}

// csvOut writes the rows of sample batches as encoding/csv would write
// them (the same bytes), formatting into a buffer written out in large
// pieces; the first error sticks.
type csvOut struct {
	w   io.Writer
	b   []byte
	l   *layout
	err error
	// prefix is the current sample's fixed fields up to the row kind.
	prefix []byte
	// figs and regs are a row's figure and register cells in the
	// header's order (NA, or has false, where empty); decimals the
	// decimals each figure column had last (a hint for appendValue).
	figs     []recording.Value
	decimals []int
	// same: the batch's CPU columns are the layout's.
	same bool
	regs []uint64
	has  []bool
}

// flushAt is the buffered output that makes a write.
const flushAt = 256 << 10

func newCSV(w io.Writer, l *layout) *csvOut {
	header := FixedColumns()
	header = append(header, l.cpuCols...)
	header = append(header, l.pkgCols...)
	for _, m := range append(slices.Clone(l.cpuRegs), l.pkgRegs...) {
		header = append(header, summary.RegName(m))
	}
	nf, nr := len(l.cpuCols)+len(l.pkgCols), len(l.cpuRegs)+len(l.pkgRegs)
	c := &csvOut{w: w, b: make([]byte, 0, flushAt+64<<10), l: l,
		figs: make([]recording.Value, nf), decimals: make([]int, nf), regs: make([]uint64, nr), has: make([]bool, nr)}
	for i, h := range header {
		if i > 0 {
			c.b = append(c.b, ',')
		}
		c.b = appendField(c.b, h)
	}
	c.b = append(c.b, '\n')
	return c
}

// samples writes the rows of samples of the run that start began, whose
// figures are in the columns cpuCols and pkgCols.
func (c *csvOut) samples(start recording.RunStart, cpuCols, pkgCols []string, samples []recording.Sample) {
	l := c.l
	ci, pi := indexes(l.cpuCols, cpuCols), indexes(l.pkgCols, pkgCols)
	c.same = len(ci) == len(l.cpuCols) && identity(ci)
	for i := range samples {
		s := &samples[i]
		if c.err != nil {
			return
		}
		c.samplePrefix(start, s)
		eachRow(s, func(r *rowCells) {
			c.cells(ci, r.cpuVals, pi, r.pkgVals, r.cpuRegs, r.pkgRegs)
			c.row(r)
		})
	}
}

// samplePrefix sets the fixed fields that every row of sample s shares.
func (c *csvOut) samplePrefix(start recording.RunStart, s *recording.Sample) {
	b := strconv.AppendInt(c.prefix[:0], int64(start.Run), 10)
	b = append(b, ',')
	b = appendField(b, start.Side)
	b = append(b, ',')
	b = time.Unix(0, s.TimeNs).UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, ',')
	b = appendSeconds(b, s.TimeNs-start.TimeNs)
	b = append(b, ',')
	b = appendSeconds(b, s.IntervalNs)
	c.prefix = append(b, ',')
}

// cells sets a row's figure and register cells: values of the run's CPU
// columns (placed by ci) and package columns (by pi), registers of the
// CPU and package register columns. A later value of a column that
// appears twice wins, unless it is NA.
func (c *csvOut) cells(ci []int, cpuVals []recording.Value, pi []int, pkgVals []recording.Value, cpuRegs, pkgRegs []recording.Reg) {
	na := recording.NA()
	for i := range c.figs {
		c.figs[i] = na
	}
	clear(c.has)
	nCPU, nCPURegs := len(c.l.cpuCols), len(c.l.cpuRegs)
	if len(cpuVals) == nCPU && c.same {
		copy(c.figs, cpuVals) // the usual case: the layout's columns
	} else {
		place(c.figs[:nCPU], ci, cpuVals)
	}
	place(c.figs[nCPU:], pi, pkgVals)
	c.placeRegs(c.regs[:nCPURegs], c.has[:nCPURegs], c.l.cpuRegs, cpuRegs)
	c.placeRegs(c.regs[nCPURegs:], c.has[nCPURegs:], c.l.pkgRegs, pkgRegs)
}

// identity reports whether idx maps each index to itself.
func identity(idx []int) bool {
	for i, x := range idx {
		if x != i {
			return false
		}
	}
	return true
}

// place puts each valid value vals[i] at dst[idx[i]].
func place(dst []recording.Value, idx []int, vals []recording.Value) {
	for i, v := range vals {
		if i < len(idx) && idx[i] >= 0 && v.Valid() {
			dst[idx[i]] = v
		}
	}
}

// placeRegs puts each register at its column, of those in order.
func (c *csvOut) placeRegs(dst []uint64, has []bool, order []uint32, regs []recording.Reg) {
	for _, g := range regs {
		if i, ok := slices.BinarySearch(order, g.MSR); ok {
			dst[i], has[i] = g.Value, true
		}
	}
}

// row writes a row: the sample's fixed fields, the row's kind, type and
// places, then its cells.
func (c *csvOut) row(r *rowCells) {
	b := append(c.b, c.prefix...)
	b = append(b, r.kind...)
	b = append(b, ',')
	b = appendField(b, r.typ)
	for i, x := range r.place {
		b = append(b, ',')
		if i < r.places {
			b = appendDecimal(b, int64(x), 0)
		}
	}
	for i, v := range c.figs {
		b = append(b, ',')
		if v.Valid() {
			b = appendValue(b, float64(v), &c.decimals[i])
		}
	}
	for i, v := range c.regs {
		b = append(b, ',')
		if c.has[i] {
			b = appendHex(b, v)
		}
	}
	c.b = append(b, '\n')
	if len(c.b) >= flushAt {
		c.write()
	}
}

// write writes out the buffered output.
func (c *csvOut) write() {
	if c.err == nil && len(c.b) > 0 {
		_, c.err = c.w.Write(c.b)
	}
	c.b = c.b[:0]
}

func (c *csvOut) failed() error { return c.err }

func (c *csvOut) close() error {
	c.write()
	return c.err
}

func union(have, add []string) []string {
	for _, c := range add {
		if !slices.Contains(have, c) {
			have = append(have, c)
		}
	}
	return have
}

func addReg(have []uint32, m uint32) []uint32 {
	if i, ok := slices.BinarySearch(have, m); !ok {
		have = slices.Insert(have, i, m)
	}
	return have
}

// indexes maps each of a run's columns to its place in all.
func indexes(all, cols []string) []int {
	out := make([]int, len(cols))
	for i, c := range cols {
		out[i] = slices.Index(all, c)
	}
	return out
}
