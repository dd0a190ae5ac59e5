// Package export writes a recording's samples in formats other tools read.
package export

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
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
	var cpuCols, pkgCols []string
	var cpuRegs, pkgRegs []uint32
	for _, run := range rec.Runs {
		cpuCols = union(cpuCols, run.CPUColumns)
		pkgCols = union(pkgCols, run.PackageColumns)
		for _, s := range run.Samples {
			for _, c := range s.CPUs {
				for _, g := range c.Regs {
					cpuRegs = addReg(cpuRegs, g.MSR)
				}
			}
			for _, p := range s.Packages {
				for _, g := range p.Regs {
					pkgRegs = addReg(pkgRegs, g.MSR)
				}
			}
		}
	}
	header := FixedColumns()
	header = append(header, cpuCols...)
	header = append(header, pkgCols...)
	for _, m := range append(slices.Clone(cpuRegs), pkgRegs...) {
		header = append(header, summary.RegName(m))
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	nFixed, nCPU, nPkg := len(FixedColumns()), len(cpuCols), len(pkgCols)
	line := make([]string, len(header))
	for _, run := range rec.Runs {
		ci := indexes(cpuCols, run.CPUColumns)
		pi := indexes(pkgCols, run.PackageColumns)
		for _, s := range run.Samples {
			fixed := func(kind, typ string, pkg, core, cpu string) {
				clear(line)
				copy(line, []string{strconv.Itoa(run.Start.Run), run.Start.Side,
					time.Unix(0, s.TimeNs).UTC().Format(time.RFC3339Nano),
					seconds(s.TimeNs - run.Start.TimeNs), seconds(s.IntervalNs), kind, typ, pkg, core, cpu})
			}
			for _, c := range s.CPUs {
				fixed(RowCPU, c.CoreType, strconv.Itoa(c.Package), strconv.Itoa(c.Core), strconv.Itoa(c.CPU))
				fill(line[nFixed:], ci, c.Values)
				regCols(line[nFixed+nCPU+nPkg:], cpuRegs, c.Regs)
				if err := cw.Write(line); err != nil {
					return err
				}
			}
			for _, p := range s.Packages {
				fixed(RowPackage, "", strconv.Itoa(p.Package), "", "")
				fill(line[nFixed+nCPU:], pi, p.Values)
				regCols(line[nFixed+nCPU+nPkg+len(cpuRegs):], pkgRegs, p.Regs)
				if err := cw.Write(line); err != nil {
					return err
				}
			}
			for _, m := range s.Summaries {
				fixed(RowSummary, m.Type, "", "", "")
				fill(line[nFixed:], ci, m.Values)
				fill(line[nFixed+nCPU:], pi, m.PackageValues)
				if err := cw.Write(line); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
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
		if i < len(idx) && v.Valid() {
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
