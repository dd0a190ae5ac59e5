// SPDX-License-Identifier: Apache-2.0

package report

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/analysis/timeline"
	"github.com/hwpprobe/hwpprobe/internal/files/atomicfile"
	"github.com/hwpprobe/hwpprobe/internal/reports/report/htmlreport"
	"github.com/hwpprobe/hwpprobe/internal/reports/verdict"
)

// ErrCrossed is returned by Diff when a --fail-if threshold was crossed.
var ErrCrossed = errors.New("threshold crossed")

// InputError is returned by Diff when the recordings cannot be analysed
// (unreadable, not an experiment, a side without runs) or are incomplete.
type InputError struct{ Err error }

func (e InputError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e InputError) Unwrap() error { return e.Err }

// DiffOptions is an offline diff: the recordings and the outputs.
type DiffOptions struct {
	Paths         []string // one experiment, or two recordings
	Stats         analysis.Options
	KeepDisturbed bool
	Markdown      string // file to write, "" none
	JSON          string // file to write, "" none
	HTML          string // the page (package htmlreport) to write, "" none
	Thresholds    []analysis.Threshold
	// Verdict, when set, gets the thresholds' verdicts
	// (analysis.ThresholdCases) once the complete runs are analysed and
	// the reports written, before Diff returns (diff --ktap, --junit).
	Verdict func(*verdict.Case) error
	// Reference names the side (its label: A, B, ...) the others are
	// compared with in an experiment of more than two sides; "" the
	// first.
	Reference string
	// Explain attributes the change from A to B to the chain's steps
	// (an experiment of hwpprobe explain), with equivalence margin
	// Precision.
	Explain   bool
	Precision float64
	Info      Info
	// Owner, when set, gets the report files (the invoking user under
	// sudo): uid and gid.
	Owner *[2]int
}

// Diff analyses recordings and writes the text report to w and the
// Markdown and JSON reports to their files (each replaced whole, never
// left half-written). An incomplete input is analysed over its whole runs
// and then reported as an InputError; a side whose settings held in none
// of its runs gives an error wrapping analysis.ErrNotHeld, and no report;
// a crossed threshold gives an error wrapping ErrCrossed.
func Diff(w io.Writer, o DiffOptions) error {
	for _, out := range []string{o.Markdown, o.JSON, o.HTML} {
		if err := atomicfile.CheckInputs(out, o.Paths); out != "" && err != nil {
			return InputError{err}
		}
	}
	srcs, incomplete := analysis.ReadSources(o.Paths)
	if srcs == nil {
		return InputError{incomplete}
	}
	res, err := analysis.Analyze(srcs, o.Stats, o.KeepDisturbed)
	switch {
	case errors.Is(err, analysis.ErrNotHeld):
		return err // what was measured is no comparison: an error, not bad input
	case err != nil && incomplete != nil:
		// What is missing may be why nothing can be compared.
		return InputError{fmt.Errorf("%w (%v)", err, incomplete)}
	case err != nil:
		return InputError{err}
	}
	if err := checkMulti(res, o); err != nil {
		return InputError{err}
	}
	if o.Explain {
		if err := res.Explain(o.Precision); err != nil {
			return InputError{err}
		}
	}
	if o.Info.Emulated == "" {
		o.Info.Emulated = res.Meta.Emulated
	}
	if err := WriteText(w, res, o.Info); err != nil {
		return err
	}
	if o.Markdown != "" {
		if err := writeFile(o.Markdown, o.Paths, o.Owner, func(f io.Writer) error { return WriteMarkdown(f, res, o.Info) }); err != nil {
			return err
		}
	}
	if o.JSON != "" {
		if err := writeFile(o.JSON, o.Paths, o.Owner, func(f io.Writer) error { return WriteJSON(f, res, o.Info, o.Thresholds) }); err != nil {
			return err
		}
	}
	if o.HTML != "" {
		if err := writeDiffPage(o, res); err != nil {
			return err
		}
	}
	if incomplete != nil {
		return InputError{fmt.Errorf("%w (the complete runs were analysed)", incomplete)}
	}
	if o.Verdict != nil {
		if err := o.Verdict(analysis.ThresholdCases(res, o.Thresholds)); err != nil {
			return err
		}
	}
	for _, t := range o.Thresholds {
		if t.Crossed(res) {
			return fmt.Errorf("%w: %s (%s)", ErrCrossed, t.Text, res.Verdict())
		}
	}
	return nil
}

// writeFile writes path whole (package atomicfile): the file is either
// the old one or the whole new one, and never one of the inputs.
func writeFile(path string, inputs []string, owner *[2]int, write func(io.Writer) error) error {
	f, err := atomicfile.Create(path, atomicfile.Options{Replace: true, Inputs: inputs})
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	defer f.Abort()
	if owner != nil {
		if err := f.Chown(owner[0], owner[1]); err != nil {
			return fmt.Errorf("report: give %s to uid %d: %w", path, owner[0], err)
		}
	}
	if err := write(f); err != nil {
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// writeDiffPage writes the HTML page of the analysed result, with the
// recordings' timelines.
func writeDiffPage(o DiffOptions, res *analysis.Result) error {
	tl, err := timeline.Build(o.Paths, timeline.Options{})
	if err != nil {
		return InputError{err}
	}
	in := htmlreport.Options{Info: htmlreport.Info{Version: o.Info.Version, Emulated: o.Info.Emulated}, Timeline: tl}
	return writeFile(o.HTML, o.Paths, o.Owner, func(f io.Writer) error { return htmlreport.WriteDiff(f, res, in) })
}

// checkMulti checks the options that depend on the number of sides and
// compares with the reference chosen.
func checkMulti(res *analysis.Result, o DiffOptions) error {
	n := len(res.Sides)
	switch {
	case n == 2 && o.Reference != "":
		return fmt.Errorf("--reference chooses among 3 or more sides; this experiment has 2")
	case n > 2 && len(o.Thresholds) > 0:
		return fmt.Errorf("--fail-if compares two sides; this experiment has %d", n)
	case o.Reference == "":
		return nil
	}
	ref := res.SideIndex(o.Reference)
	if ref < 0 {
		return fmt.Errorf("--reference %q: no such side (sides: %s)", o.Reference, strings.Join(res.Labels(), ", "))
	}
	return res.CompareSides(ref)
}
