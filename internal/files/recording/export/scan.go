// SPDX-License-Identifier: Apache-2.0

package export

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
)

// rowSink writes the rows of sample batches in some format.
type rowSink interface {
	// samples writes the rows of samples of the run that start began,
	// whose figures are in the columns cpuCols and pkgCols.
	samples(start recording.RunStart, cpuCols, pkgCols []string, samples []recording.Sample)
	// failed returns the first error met writing, which stops the scan.
	failed() error
	// close writes what is left and ends the output.
	close() error
}

// scanTwice exports the recording at path through the sink open returns
// for its layout: it reads the file twice batch by batch
// (recording.ScanFile: the columns, then the rows), so that memory does
// not grow with the recording's samples. A path that is not a regular
// file (a pipe) is read once: the first scan keeps the bytes it read, as
// stored, and the second scans them. It returns the recording read
// (without samples), whose Issue says what was lost.
func scanTwice(path string, open func(*layout) rowSink) (*recording.Recording, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	first := func(parts recording.Parts, batch func(recording.Record) error) (*recording.Recording, error) {
		return recording.ScanFileParts(path, parts, batch)
	}
	second := first
	if !st.Mode().IsRegular() {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		var stored bytes.Buffer
		first = func(parts recording.Parts, batch func(recording.Record) error) (*recording.Recording, error) {
			rec, err := recording.ScanParts(io.TeeReader(f, &stored), parts, batch)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			return rec, nil
		}
		second = func(parts recording.Parts, batch func(recording.Record) error) (*recording.Recording, error) {
			return recording.ScanParts(bytes.NewReader(stored.Bytes()), parts, batch)
		}
	}
	var l layout
	// The first scan needs the registers alone: the CPU rows' as columns.
	rec, err := first(recording.PartCPURegColumns|recording.PartPackages, func(r recording.Record) error {
		if b, ok := r.(recording.Samples); ok {
			l.addBatch(b)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sink := open(l.columns(rec.Runs))
	starts := map[int]recording.RunStart{}
	for _, run := range rec.Runs {
		starts[run.Start.Run] = run.Start
	}
	rec, err = second(recording.PartRows, func(r recording.Record) error {
		if b, ok := r.(recording.Samples); ok {
			sink.samples(starts[b.Run], b.CPUColumns, b.PackageColumns, b.Samples)
		}
		return sink.failed()
	})
	if err != nil {
		return nil, err
	}
	return rec, sink.close()
}

// writeWhole exports a recording held in memory through the sink open
// returns for its layout: the registers of every sample first, for the
// header, then the rows in run order.
func writeWhole(rec *recording.Recording, open func(*layout) rowSink) error {
	var l layout
	for _, run := range rec.Runs {
		for _, s := range run.Samples {
			l.addRegs(s)
		}
	}
	sink := open(l.columns(rec.Runs))
	for _, run := range rec.Runs {
		sink.samples(run.Start, run.CPUColumns, run.PackageColumns, run.Samples)
	}
	return sink.close()
}

// rowCells is one row of a sample as both formats write it: its kind and
// type, the first places of package, core and CPU it fills (the others
// empty), and its figures and registers in the run's columns.
type rowCells struct {
	kind, typ        string
	places           int
	place            [3]int // package, core, CPU
	cpuVals, pkgVals []recording.Value
	cpuRegs, pkgRegs []recording.Reg
}

// eachRow calls each with the rows of s in their order: one per CPU, per
// package and per summary row. The row passed is reused.
func eachRow(s *recording.Sample, each func(*rowCells)) {
	var r rowCells
	for i := range s.CPUs {
		c := &s.CPUs[i]
		r = rowCells{kind: RowCPU, typ: c.CoreType, places: 3, place: [3]int{c.Package, c.Core, c.CPU},
			cpuVals: c.Values, cpuRegs: c.Regs}
		each(&r)
	}
	for i := range s.Packages {
		p := &s.Packages[i]
		r = rowCells{kind: RowPackage, places: 1, place: [3]int{p.Package}, pkgVals: p.Values, pkgRegs: p.Regs}
		each(&r)
	}
	for i := range s.Summaries {
		m := &s.Summaries[i]
		r = rowCells{kind: RowSummary, typ: m.Type, cpuVals: m.Values, pkgVals: m.PackageValues}
		each(&r)
	}
}
