// SPDX-License-Identifier: Apache-2.0

package report

import (
	"io"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/kernel/topology"
	"github.com/hwpprobe/hwpprobe/internal/reports/report/internal/words"
)

// WriteText writes the terminal report: per side and core type the
// evidence, then what differs, the warnings and the verdict.
func WriteText(w io.Writer, res *analysis.Result, in Info) error {
	e := &errWriter{w: w}
	if in.Emulated != "" {
		e.printf("EMULATED machine %q: every figure below is emulated, not measured\n\n", in.Emulated)
	}
	writeContextText(e, res)
	for _, s := range res.Sides {
		e.printf("%s: %s  (%d runs counted)\n", s.Label, words.Settings(s.Settings), s.Counted)
		for _, ct := range s.CoreTypes {
			e.printf("  %-4s %2d CPUs  Avg_MHz %s  Bzy_MHz %s  Busy%% %s  IPC %s  CoreTmp %s C\n", ct.Type, ct.CPUs,
				num(ct.AvgMHz, 0), num(ct.BzyMHz, 0), num(ct.BusyPct, 1), num(ct.IPC, 2), num(ct.CoreTmp, 0))
			if ct.Type == topology.All && len(s.CoreTypes) > 1 {
				continue
			}
			e.printf("       held:    %s\n", requestText(ct.Held))
			for _, wr := range ct.Written {
				e.printf("       written: %s x%d: %s\n", wr.Comm, wr.Writes, requestText(wr.Fields))
			}
			if len(ct.Written) == 0 {
				e.printf("       written: no traced writes\n")
			}
		}
		e.printf("  PkgTmp %s C  limits (median per run): %s  new HWP excursions: %s  PL2 window: %s\n\n", num(s.PkgTmp, 0),
			words.LimitSeconds(s.LimitSeconds, 0), words.NewExcursions(s.NewExcursions, s.ExcursionRuns), words.PL2Share(s.PL2Share))
	}
	writeRunsText(e, res)
	writeFactsText(e, res)
	if len(res.Multi) > 0 {
		writeMultiText(e, res)
		writeMissingText(e, res)
		writeExplainText(e, res)
		return e.err
	}
	e.printf("\n%-20s %-18s %-18s %s\n", "figure", res.Sides[0].Label, res.Sides[1].Label, "vs A")
	var fn footnotes
	for _, f := range res.AllFigures() {
		a, b, delta := statCells(&fn, f.Comparison, words.Interval)
		e.printf("%-20s %-18s %-18s %s\n", f.Name+" ("+f.Unit+")", a, b, delta)
	}
	writeNotesText(e, fn, figureNotes(res))
	if len(res.Differs)+res.DiffersNotSignificant > 0 {
		e.printf("\nwhat differs (settings, registers, then significant figures, largest first):\n")
		for _, d := range res.Differs {
			e.printf("  %-16s A %-14s B %s%s\n", d.What, d.A, d.B, words.DifferenceNote(d))
		}
		if h := words.DiffersHidden(res.DiffersNotSignificant); h != "" {
			e.printf("  %s\n", h)
		}
	}
	writeMissingText(e, res)
	e.printf("\nverdict: %s\n", res.Verdict())
	writeExplainText(e, res)
	return e.err
}

// writeNotesText writes the footnotes and notes below a table, a line
// each.
func writeNotesText(e *errWriter, fn footnotes, notes []string) {
	for _, l := range fn.lines() {
		e.printf("%s\n", l)
	}
	for _, n := range notes {
		e.printf("note: %s\n", n)
	}
}

// writeMissingText writes what the files lack and the warnings the
// statistics tables did not print.
func writeMissingText(e *errWriter, res *analysis.Result) {
	for _, m := range res.Missing {
		e.printf("missing: %s\n", m)
	}
	for _, wn := range warningsBesideFootnotes(res) {
		e.printf("warning: %s\n", wn)
	}
}

func writeRunsText(e *errWriter, res *analysis.Result) {
	e.printf("runs (in order):\n")
	for _, r := range res.Runs {
		note := ""
		if !r.Counted() {
			note = "  [" + r.Excluded + "]"
		}
		e.printf("  %3d %-*s %9.3f s  %8s J  %6s W  status %d%s\n", r.Run, sideWidth(res), r.Side, r.Seconds,
			num(r.Joules, 0), num(r.PkgWatts, 1), r.ExitCode, note)
	}
}

// writeFactsText writes each run's evidence (analysis.RunFacts).
func writeFactsText(e *errWriter, res *analysis.Result) {
	e.printf("\nper-run evidence (docs/diff.md, \"Per-run evidence\"):\n")
	for _, r := range res.Runs {
		f := words.Facts(r.Facts)
		e.printf("  %3d %-*s excursions %s; limits %s; PL2 window %s\n", r.Run, sideWidth(res), r.Side, f.Excursions, f.Limits, f.PL2)
		pad := strings.Repeat(" ", 6+sideWidth(res))
		e.printf("%spower: %s\n%sBzy_MHz parallel %s; serial %s\n", pad, f.Power, pad, f.Parallel, f.Serial)
		e.printf("%sPL1/PL2: %s\n", pad, f.PowerLimit)
	}
}

func sideWidth(res *analysis.Result) int {
	w := len("A")
	for _, s := range res.Sides {
		w = max(w, len(s.Label))
	}
	return w
}

// writeContextText writes the context block: what surrounded the runs
// (power daemons, platform profile, power supply, firmware, kernel).
func writeContextText(e *errWriter, res *analysis.Result) {
	for _, b := range words.ContextBlocks(res.Sources, res.Contexts) {
		e.printf("context%s:\n", b.Of())
		for _, r := range b.Rows {
			e.printf("  %-20s %s\n", r.Key, r.Value)
		}
		e.printf("\n")
	}
}
