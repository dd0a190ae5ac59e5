// SPDX-License-Identifier: Apache-2.0

package report

import (
	"errors"
	"fmt"
	"io"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/analysis/timeline"
	"github.com/hwpprobe/hwpprobe/internal/files/atomicfile"
	"github.com/hwpprobe/hwpprobe/internal/reports/report/htmlreport"
	"github.com/hwpprobe/hwpprobe/internal/reports/report/png"
)

// ErrNoOutput: Page was given no output file.
var ErrNoOutput = errors.New("no output file")

// PageOptions is `hwpprobe report`: the recordings and the page to write.
type PageOptions struct {
	// Paths: one recording (a `record` file or a `diff` experiment), or
	// two recordings compared as diff compares them.
	Paths  []string
	Output string // the HTML file
	// PNG, when set, is a directory to write the main charts into as
	// PNG files (package report/png).
	PNG string
	// PerCPU adds a chart of every CPU's delivered frequency.
	PerCPU        bool
	Stats         analysis.Options
	KeepDisturbed bool
	Info          Info
	Owner         *[2]int // uid, gid to give the file; nil: keep
}

// Page writes the HTML page of recordings (and, with PNG, their main
// charts as PNG files): an experiment's (one diff
// file, or two recordings) with the statistics and the verdict, or a
// recording's. The file is written whole or not at all, and never over
// an input. Input that cannot be read is an InputError and no file is
// written; a file cut short gives the page of what it holds, which says
// what is missing, and then an InputError.
func Page(o PageOptions) error {
	if o.Output == "" {
		return InputError{ErrNoOutput}
	}
	if err := atomicfile.CheckInputs(o.Output, o.Paths); err != nil {
		return InputError{err}
	}
	srcs, incomplete := analysis.ReadSources(o.Paths)
	if srcs == nil {
		return InputError{incomplete}
	}
	tl, err := timeline.Build(o.Paths, timeline.Options{PerCPU: o.PerCPU})
	if err != nil {
		return InputError{err}
	}
	write, err := pageWriter(srcs, tl, o)
	if err != nil {
		return InputError{err}
	}
	if err := writeFile(o.Output, o.Paths, o.Owner, write); err != nil {
		return err
	}
	if o.PNG != "" {
		if _, err := png.Write(o.PNG, tl, png.Options{}); err != nil {
			return fmt.Errorf("report: PNG charts in %s: %w", o.PNG, err)
		}
	}
	if incomplete != nil {
		return InputError{fmt.Errorf("%w (the page shows what it holds)", incomplete)}
	}
	return nil
}

// pageWriter analyses the sources and returns what writes their page.
func pageWriter(srcs []analysis.Source, tl *timeline.Timeline, o PageOptions) (func(io.Writer) error, error) {
	in := htmlreport.Options{Info: htmlreport.Info{Version: o.Info.Version, Emulated: o.Info.Emulated}, Timeline: tl}
	if len(srcs) == 1 && srcs[0].Rec.Meta.Kind != "diff" {
		rec, err := analysis.AnalyzeRecording(srcs[0])
		if err != nil {
			return nil, err
		}
		return func(w io.Writer) error { return htmlreport.WriteRecord(w, rec, in) }, nil
	}
	res, err := analysis.Analyze(srcs, o.Stats, o.KeepDisturbed)
	if errors.Is(err, analysis.ErrTooFewRuns) && len(srcs) == 1 && srcs[0].Rec.Issue() != nil {
		// An experiment cut short before both sides had a run: the page
		// of its runs, without the comparison.
		rec, rerr := analysis.AnalyzeRecording(srcs[0])
		if rerr != nil {
			return nil, err
		}
		rec.Missing = append(rec.Missing, fmt.Sprintf("the comparison: %v", err))
		return func(w io.Writer) error { return htmlreport.WriteRecord(w, rec, in) }, nil
	}
	if err != nil {
		return nil, err
	}
	return func(w io.Writer) error { return htmlreport.WriteDiff(w, res, in) }, nil
}
