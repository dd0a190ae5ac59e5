// SPDX-License-Identifier: Apache-2.0

package recording

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Recording is a whole file read into memory: the experiment's metadata
// and its runs in the order they started.
type Recording struct {
	Version Version
	Meta    Meta
	Runs    []*Run
	Notes   []Note // notes about the whole file (Run 0)
	End     *End   // nil when the file was cut short
	// Problem says why reading stopped early: an error wrapping
	// ErrTruncated or ErrCorrupt. Everything before it was read.
	Problem error
	// Skipped counts records of types added by a newer minor version of
	// the format than this reader knows; a file with any is not complete.
	Skipped int
	// SkippedTypes are the types of the skipped records, each once, in
	// the order first met.
	SkippedTypes []RecordType
}

// Run is one run with everything recorded for it.
type Run struct {
	Start          RunStart
	End            *RunEnd // nil when the file was cut short during the run
	Snapshots      []Snapshot
	CPUColumns     []string // columns of every Sample's CPU rows
	PackageColumns []string // columns of every Sample's package rows
	Samples        []Sample
	Trace          []TraceEvent
	TraceLost      uint64
	Process        []Process
	Notes          []Note
}

// Snapshot returns the run's snapshot of a phase, or nil.
func (r *Run) Snapshot(phase string) *Snapshot {
	for i := range r.Snapshots {
		if r.Snapshots[i].Phase == phase {
			return &r.Snapshots[i]
		}
	}
	return nil
}

// Column returns the index of a CPU column, or -1.
func (r *Run) Column(name string) int { return slices.Index(r.CPUColumns, name) }

// PackageColumn returns the index of a package column, or -1.
func (r *Run) PackageColumn(name string) int { return slices.Index(r.PackageColumns, name) }

// CorruptError is the error show and export end with, after using what
// they read, when the file at path is damaged (not merely cut short);
// nil otherwise.
func (rec *Recording) CorruptError(path string) error {
	if errors.Is(rec.Problem, ErrCorrupt) {
		return fmt.Errorf("%s: %w", path, rec.Problem)
	}
	return nil
}

// Complete reports whether the writer finished the file and every record
// of it was read: none damaged, none skipped.
func (rec *Recording) Complete() bool { return rec.End != nil && rec.Issue() == nil }

// Issue returns what keeps the records read from being the whole file:
// Problem, or else SkippedError. Nil when nothing was lost.
func (rec *Recording) Issue() error {
	if rec.Problem != nil {
		return rec.Problem
	}
	return rec.SkippedError()
}

// SkippedError returns an error wrapping ErrSkipped that names the types
// of the records skipped, of types newer than this reader; nil when none
// was.
func (rec *Recording) SkippedError() error {
	if rec.Skipped == 0 {
		return nil
	}
	types := make([]string, len(rec.SkippedTypes))
	for i, t := range rec.SkippedTypes {
		types[i] = strconv.Itoa(int(t))
	}
	return fmt.Errorf("%w: %d records of types this hwpprobe does not know (%s; the file is version %s, this hwpprobe knows %d.%d)",
		ErrSkipped, rec.Skipped, strings.Join(types, ", "), rec.Version, rec.Version.Major, knownMinor(rec.Version.Major))
}

// ReadFile reads a recording from a file. See Read.
func ReadFile(path string) (*Recording, error) { return ScanFile(path, nil) }

// Read reads every record. It fails only when nothing usable can be read
// (not a recording, unknown major version, no meta record); a file cut
// short or corrupt after its meta record gives the records before the
// damage, with Recording.Problem saying what stopped the reading. What it
// inflates and decodes is bounded by the bytes read (the budget of
// docs/recording-format.md, "Bounds on reading"), but it keeps every row:
// its memory grows with the rows, which a steady recording's columnar
// batches hold hundreds of per byte. Readers of files of any length scan.
func Read(r io.Reader) (*Recording, error) { return Scan(r, nil) }

// ScanFile scans a recording from a file. See Scan.
func ScanFile(path string, batch func(Record) error) (*Recording, error) {
	return ScanFileParts(path, PartRows, batch)
}

// ScanFileParts scans a recording from a file, decoding only the parts of
// sample batches that parts selects. See ScanParts.
func ScanFileParts(path string, parts Parts, batch func(Record) error) (*Recording, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rec, err := ScanParts(f, parts, batch)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rec, nil
}

// Scan reads a recording as Read does, except that, when batch is not
// nil, it keeps no samples or trace events: it hands every record to
// batch in file order, the meta record first, each once it is filed
// under its run; Samples and Trace records come in buffers reused for the next one
// (valid only during the call; no allocation per row), so that memory
// does not grow with the recording's length. The Recording it returns has everything
// else: metadata, runs with their start, end, snapshots, process
// counters, notes, columns (Run.CPUColumns, PackageColumns) and
// TraceLost, but no Run.Samples or Run.Trace. An error from batch stops
// the scan and is returned.
func Scan(r io.Reader, batch func(Record) error) (*Recording, error) {
	return ScanParts(r, PartRows, batch)
}

// ScanParts is Scan decoding only the parts of sample batches that parts
// selects: the rest of every row is left at its zero value (nil slices,
// zero ids, empty strings), whatever the file's format version. It
// checks the columns it decodes, and the framing of the others but not
// their content.
func ScanParts(r io.Reader, parts Parts, batch func(Record) error) (*Recording, error) {
	rd, err := NewReader(r)
	if err != nil {
		return nil, err
	}
	rd.reuse, rd.parts = batch != nil, parts
	first, err := rd.Next()
	if err != nil {
		if err == io.EOF {
			err = fmt.Errorf("%w: the file has no meta record", ErrTruncated)
		}
		return nil, err
	}
	rec := &Recording{Version: rd.Version(), Meta: first.(Meta)}
	if batch != nil {
		if err := batch(first); err != nil {
			return nil, err
		}
	}
	runs := map[int]*Run{}
	for {
		r, err := rd.Next()
		if err == io.EOF {
			return rec, nil
		}
		if err != nil {
			if !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrCorrupt) {
				return nil, err
			}
			rec.Problem = err
			return rec, nil
		}
		if err := rec.add(runs, r, batch != nil); err != nil {
			rec.Problem = fmt.Errorf("%w at offset %d: %v", ErrCorrupt, rd.Offset(), err)
			return rec, nil
		}
		if batch == nil {
			continue
		}
		if err := batch(r); err != nil {
			return nil, err
		}
	}
}

// add files a record under its run; with scan, samples and trace events
// are not kept (their columns and lost count are).
func (rec *Recording) add(runs map[int]*Run, r Record, scan bool) error {
	run := func(id int) (*Run, error) {
		if x, ok := runs[id]; ok {
			return x, nil
		}
		return nil, fmt.Errorf("%s record for run %d, which has not started", r.Type(), id)
	}
	switch r := r.(type) {
	case RunStart:
		if _, ok := runs[r.Run]; ok {
			return fmt.Errorf("run %d starts twice", r.Run)
		}
		x := &Run{Start: r}
		runs[r.Run] = x
		rec.Runs = append(rec.Runs, x)
	case RunEnd:
		x, err := run(r.Run)
		if err != nil {
			return err
		}
		x.End = &r
	case Snapshot:
		x, err := run(r.Run)
		if err != nil {
			return err
		}
		x.Snapshots = append(x.Snapshots, r)
	case Samples:
		x, err := run(r.Run)
		if err != nil {
			return err
		}
		if scan {
			mergeColumns(&x.CPUColumns, r.CPUColumns)
			mergeColumns(&x.PackageColumns, r.PackageColumns)
			break
		}
		x.addSamples(r)
	case Trace:
		x, err := run(r.Run)
		if err != nil {
			return err
		}
		if !scan {
			x.Trace = append(x.Trace, r.Events...)
		}
		x.TraceLost += r.Lost
	case Process:
		x, err := run(r.Run)
		if err != nil {
			return err
		}
		x.Process = append(x.Process, r)
	case Note:
		if r.Run == 0 {
			rec.Notes = append(rec.Notes, r)
			break
		}
		x, err := run(r.Run)
		if err != nil {
			return err
		}
		x.Notes = append(x.Notes, r)
	case End:
		rec.End = &r
	case Unknown:
		rec.Skipped++
		if !slices.Contains(rec.SkippedTypes, r.RecType) {
			rec.SkippedTypes = append(rec.SkippedTypes, r.RecType)
		}
	}
	return nil
}

// addSamples appends a batch, mapping its columns onto the run's: a column
// first seen in a later batch is added, and earlier samples lack it.
func (x *Run) addSamples(b Samples) {
	cpuMap := mergeColumns(&x.CPUColumns, b.CPUColumns)
	pkgMap := mergeColumns(&x.PackageColumns, b.PackageColumns)
	for _, s := range b.Samples {
		for i := range s.CPUs {
			s.CPUs[i].Values = remap(s.CPUs[i].Values, cpuMap, len(x.CPUColumns))
		}
		for i := range s.Packages {
			s.Packages[i].Values = remap(s.Packages[i].Values, pkgMap, len(x.PackageColumns))
		}
		for i := range s.Summaries {
			s.Summaries[i].Values = remap(s.Summaries[i].Values, cpuMap, len(x.CPUColumns))
			s.Summaries[i].PackageValues = remap(s.Summaries[i].PackageValues, pkgMap, len(x.PackageColumns))
		}
		x.Samples = append(x.Samples, s)
	}
}

// mergeColumns adds cols to *have and returns, for each of cols, its index
// in *have; nil when cols equals *have.
func mergeColumns(have *[]string, cols []string) []int {
	if slices.Equal(*have, cols) {
		return nil
	}
	idx := make([]int, len(cols))
	for i, c := range cols {
		j := slices.Index(*have, c)
		if j < 0 {
			*have = append(*have, c)
			j = len(*have) - 1
		}
		idx[i] = j
	}
	return idx
}

func remap(v []Value, idx []int, n int) []Value {
	if idx == nil && len(v) == n {
		return v
	}
	out := make([]Value, n)
	for i := range out {
		out[i] = NA()
	}
	for i, x := range v {
		switch {
		case idx == nil && i < n:
			out[i] = x
		case idx != nil && i < len(idx):
			out[idx[i]] = x
		}
	}
	return out
}
