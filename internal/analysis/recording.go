// SPDX-License-Identifier: Apache-2.0

package analysis

import (
	"fmt"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/files/recording/summary"
)

// RecordResult is a recording analysed on its own (a `record` file, or
// one side of a comparison looked at alone): its runs, and per core type
// the evidence over them as Analyze gives it for a side.
type RecordResult struct {
	Meta   recording.Meta
	Source string
	// Runs are the recording's runs in file order. Warm-ups, runs cut
	// short and failed runs are listed with Excluded set; none is left
	// out for a disturbance (a record fixes no settings).
	Runs []RunResult
	// Evidence is the request fields and EPB held and written, MHz,
	// temperatures and limit reasons, per core type, over the counted
	// runs (all runs when none is counted).
	Evidence SideResult
	// Missing says what the file lacks: runs cut short, a truncated file.
	Missing []string
}

// Summary returns the run's figures as `hwpprobe show` prints them.
func (r RunResult) Summary() summary.Summary { return r.summary }

// AnalyzeRecording analyses one recording's runs without comparing them:
// what `hwpprobe report` shows for a `record` file.
func AnalyzeRecording(src Source) (*RecordResult, error) {
	if src.Rec == nil {
		return nil, fmt.Errorf("%w: %s has no records", ErrTooFewRuns, src.Name)
	}
	label := src.Rec.Meta.Kind
	if label == "" {
		label = "record"
	}
	res := &Result{Meta: src.Rec.Meta}
	res.Sides = []SideResult{{Label: label}}
	if err := res.collectOne(src, label); err != nil {
		return nil, err
	}
	res.exclude(true)
	return &RecordResult{Meta: res.Meta, Source: src.Name, Runs: res.Runs, Evidence: res.side(res.Sides[0]),
		Missing: res.Missing}, nil
}

// collectOne takes src's runs as the runs of one side.
func (res *Result) collectOne(src Source, label string) error {
	if len(src.Rec.Runs) == 0 {
		return fmt.Errorf("%w: %s has no run", ErrTooFewRuns, src.Name)
	}
	res.Sources = []string{src.Name}
	res.noteIncomplete(src, "the records before it are shown")
	sc := src.scanner()
	for i, run := range src.Rec.Runs {
		r := newRunResult(src, sc, run, label)
		r.Order = i
		res.Runs = append(res.Runs, r)
	}
	return nil
}
