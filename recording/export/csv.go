// Package export writes a recording's samples in formats other tools read.
package export

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/hwpprobe/hwpprobe/recording"
	"github.com/hwpprobe/hwpprobe/recording/summary"
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
	var l layout
	for _, run := range rec.Runs {
		for _, s := range run.Samples {
			l.addRegs(s)
		}
	}
	cw := newCSV(w, l.columns(rec.Runs))
	for _, run := range rec.Runs {
		cw.samples(run.Start, run.CPUColumns, run.PackageColumns, run.Samples)
	}
	return cw.flush()
}

// WriteCSVFile writes the CSV of the recording at path, as WriteCSV would,
// reading the file twice batch by batch (recording.ScanFile: the columns,
// then the rows) so that memory does not grow with the recording. Rows
// come in file order, which is run order in the files hwpprobe writes. A
// path that is not a regular file (a pipe) is read whole, once. It returns
// the recording read (without samples), whose Issue says what was lost.
func WriteCSVFile(w io.Writer, path string) (*recording.Recording, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		rec, err := recording.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return rec, WriteCSV(w, rec)
	}
	var l layout
	first, err := recording.ScanFile(path, func(r recording.Record) error {
		if b, ok := r.(recording.Samples); ok {
			for _, s := range b.Samples {
				l.addRegs(s)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	cw := newCSV(w, l.columns(first.Runs))
	starts := map[int]recording.RunStart{}
	for _, run := range first.Runs {
		starts[run.Start.Run] = run.Start
	}
	rec, err := recording.ScanFile(path, func(r recording.Record) error {
		if b, ok := r.(recording.Samples); ok {
			cw.samples(starts[b.Run], b.CPUColumns, b.PackageColumns, b.Samples)
		}
		return cw.err
	})
	if err != nil {
		return nil, err
	}
	return rec, cw.flush()
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

// columns sets the figure columns from the runs' and returns the header.
func (l *layout) columns(runs []*recording.Run) *layout {
	for _, run := range runs {
		l.cpuCols = union(l.cpuCols, run.CPUColumns)
		l.pkgCols = union(l.pkgCols, run.PackageColumns)
	}
	return l
}

// csvOut writes the rows of sample batches; the first error sticks.
type csvOut struct {
	cw   *csv.Writer
	l    *layout
	line []string
	err  error
}

func newCSV(w io.Writer, l *layout) *csvOut {
	header := FixedColumns()
	header = append(header, l.cpuCols...)
	header = append(header, l.pkgCols...)
	for _, m := range append(slices.Clone(l.cpuRegs), l.pkgRegs...) {
		header = append(header, summary.RegName(m))
	}
	c := &csvOut{cw: csv.NewWriter(w), l: l, line: make([]string, len(header))}
	c.err = c.cw.Write(header)
	return c
}

// samples writes the rows of samples of the run that start began, whose
// figures are in the columns cpuCols and pkgCols.
func (c *csvOut) samples(start recording.RunStart, cpuCols, pkgCols []string, samples []recording.Sample) {
	l := c.l
	nFixed, nCPU, nPkg := len(FixedColumns()), len(l.cpuCols), len(l.pkgCols)
	ci, pi := indexes(l.cpuCols, cpuCols), indexes(l.pkgCols, pkgCols)
	line := c.line
	run := strconv.Itoa(start.Run)
	for _, s := range samples {
		if c.err != nil {
			return
		}
		at := time.Unix(0, s.TimeNs).UTC().Format(time.RFC3339Nano)
		elapsed, interval := seconds(s.TimeNs-start.TimeNs), seconds(s.IntervalNs)
		fixed := func(kind, typ string, pkg, core, cpu string) {
			clear(line)
			line[0], line[1], line[2], line[3], line[4] = run, start.Side, at, elapsed, interval
			line[5], line[6], line[7], line[8], line[9] = kind, typ, pkg, core, cpu
		}
		for _, r := range s.CPUs {
			fixed(RowCPU, r.CoreType, strconv.Itoa(r.Package), strconv.Itoa(r.Core), strconv.Itoa(r.CPU))
			fill(line[nFixed:], ci, r.Values)
			regCols(line[nFixed+nCPU+nPkg:], l.cpuRegs, r.Regs)
			c.write()
		}
		for _, p := range s.Packages {
			fixed(RowPackage, "", strconv.Itoa(p.Package), "", "")
			fill(line[nFixed+nCPU:], pi, p.Values)
			regCols(line[nFixed+nCPU+nPkg+len(l.cpuRegs):], l.pkgRegs, p.Regs)
			c.write()
		}
		for _, m := range s.Summaries {
			fixed(RowSummary, m.Type, "", "", "")
			fill(line[nFixed:], ci, m.Values)
			fill(line[nFixed+nCPU:], pi, m.PackageValues)
			c.write()
		}
	}
}

func (c *csvOut) write() {
	if c.err == nil {
		c.err = c.cw.Write(c.line)
	}
}

func (c *csvOut) flush() error {
	if c.err != nil {
		return c.err
	}
	c.cw.Flush()
	return c.cw.Error()
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

func fill(dst []string, idx []int, vals []recording.Value) {
	for i, v := range vals {
		if i < len(idx) && idx[i] >= 0 && v.Valid() {
			dst[idx[i]] = strconv.FormatFloat(float64(v), 'f', -1, 64)
		}
	}
}

func regCols(dst []string, order []uint32, regs []recording.Reg) {
	for _, g := range regs {
		if i, ok := slices.BinarySearchFunc(order, g.MSR, cmp.Compare); ok {
			dst[i] = fmt.Sprintf("0x%x", g.Value)
		}
	}
}

func seconds(ns int64) string { return strconv.FormatFloat(float64(ns)/1e9, 'f', -1, 64) }
