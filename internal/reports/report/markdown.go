// SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/kernel/topology"
	"github.com/hwpprobe/hwpprobe/internal/reports/report/internal/words"
)

// WriteMarkdown writes a self-contained report for a bug tracker: the
// machine, kernel, microcode and hwpprobe version, the exact settings and
// command lines, the evidence per side and core type, every run's numbers,
// what differs, the warnings and the verdict.
func WriteMarkdown(w io.Writer, res *analysis.Result, in Info) error {
	e := &errWriter{w: w}
	h := res.Meta.Host
	e.printf("## hwpprobe diff: %s\n\n", strings.Join(res.Labels(), " vs "))
	if in.Emulated != "" {
		e.printf("> **Emulated machine `%s`: every figure is emulated, not measured.**\n\n", in.Emulated)
	}
	e.printf("**Verdict:** %s\n\n", res.Verdict())
	e.printf("| | |\n|---|---|\n")
	e.printf("| machine | %s (family %d model %#x stepping %d), microcode %s |\n", h.CPUModel, h.Family, h.Model, h.Stepping, h.Microcode)
	e.printf("| kernel | %s %s, cpufreq driver %s |\n", h.Kernel, h.KernelVer, h.Driver)
	e.printf("| hwpprobe | %s (recorded by %s); `%s` |\n", in.Version, res.Meta.ToolVersion, strings.Join(res.Meta.CommandLine, " "))
	e.printf("| sources | %s |\n", strings.Join(res.Sources, ", "))
	for _, s := range res.Sides {
		e.printf("| side %s | `%s` |\n", s.Label, words.Settings(s.Settings))
	}
	if len(res.Runs) > 0 {
		e.printf("| command | `%s` |\n", strings.Join(res.Runs[0].Command, " "))
	}
	writeContextMarkdown(e, res)
	e.printf("\n### Evidence per side and core type\n\n")
	e.printf("| side | type | CPUs | HWP request and EPB held (samples) | written (traced, by process) | Avg_MHz | Bzy_MHz | Busy%% | IPC | CoreTmp |\n")
	e.printf("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range res.Sides {
		for _, ct := range s.CoreTypes {
			held, written := requestText(ct.Held), writersText(ct.Written)
			if ct.Type == topology.All && len(s.CoreTypes) > 1 {
				held, written = "(per core type above)", "(per core type above)"
			}
			e.printf("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", s.Label, ct.Type, ct.CPUs, held, written, num(ct.AvgMHz, 0), num(ct.BzyMHz, 0), num(ct.BusyPct, 1), num(ct.IPC, 2), num(ct.CoreTmp, 0))
		}
	}
	e.printf("\n| side | PkgTmp max | limit reasons (median seconds per run) | HWP excursions newly set | PL2 window (median) |\n|---|---|---|---|---|\n")
	for _, s := range res.Sides {
		e.printf("| %s | %s | %s | %s | %s |\n", s.Label, num(s.PkgTmp, 0), words.LimitSeconds(s.LimitSeconds, 0),
			words.NewExcursions(s.NewExcursions, s.ExcursionRuns), words.PL2Share(s.PL2Share))
	}
	writeFactsMarkdown(e, res)
	if len(res.Multi) > 0 {
		writeMultiMarkdown(e, res)
	} else {
		writeFiguresMarkdown(e, res)
	}
	writeExplainMarkdown(e, res)
	writeRunsMarkdown(e, res)
	if warns := warningsBesideFootnotes(res); len(warns)+len(res.Missing) > 0 {
		e.printf("\n### Warnings\n\n")
		for _, m := range append(append([]string{}, res.Missing...), warns...) {
			e.printf("- %s\n", m)
		}
	}
	return e.err
}

// writeFactsMarkdown writes each run's evidence (analysis.RunFacts) as
// a table.
func writeFactsMarkdown(e *errWriter, res *analysis.Result) {
	e.printf("\n### Per-run evidence\n\n")
	e.printf("| run | side | new HWP excursions | limit reasons | PL2 window | power | Bzy_MHz parallel | Bzy_MHz serial | PL1/PL2 |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range res.Runs {
		f := words.Facts(r.Facts)
		e.printf("| %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Run, r.Side, f.Excursions, f.Limits, f.PL2, f.Power, f.Parallel, f.Serial, f.PowerLimit)
	}
}

func writersText(ws []analysis.Writer) string {
	if len(ws) == 0 {
		return "none"
	}
	var parts []string
	for _, w := range ws {
		parts = append(parts, fmt.Sprintf("%s x%d: %s", w.Comm, w.Writes, requestText(w.Fields)))
	}
	return strings.Join(parts, "; ")
}

func writeFiguresMarkdown(e *errWriter, res *analysis.Result) {
	e.printf("\n### Statistics (median ± %.0f%% interval; U test; ratio B/A with Moses' interval)\n\n", 100*res.Options.Confidence)
	e.printf("| figure | %s | %s | vs A | p | ratio B/A [interval] |\n|---|---|---|---|---|---|\n", res.Sides[0].Label, res.Sides[1].Label)
	var fn footnotes
	for _, f := range res.AllFigures() {
		c := f.Comparison
		a, b := words.Interval(c.A)+fn.mark(c.A.Warnings), words.Interval(c.B)+fn.mark(c.B.Warnings)
		e.printf("| %s (%s) | %s | %s | %s | %s%s | %.3f [%s, %s] |\n", f.Name, f.Unit, a, b, c.Delta(),
			c.PString(), fn.mark(c.Warnings), c.Ratio, num(c.RatioLo, 3), num(c.RatioHi, 3))
	}
	writeNotesMarkdown(e, fn, figureNotes(res))
	if len(res.Differs)+res.DiffersNotSignificant > 0 {
		e.printf("\n### What differs (settings, registers, then significant figures, largest first)\n\n| what | %s | %s |\n|---|---|---|\n", res.Sides[0].Label, res.Sides[1].Label)
		for _, d := range res.Differs {
			e.printf("| %s | %s | %s%s |\n", d.What, d.A, d.B, words.DifferenceNote(d))
		}
		if h := words.DiffersHidden(res.DiffersNotSignificant); h != "" {
			e.printf("\n%s.\n", strings.ToUpper(h[:1])+h[1:])
		}
	}
}

func writeRunsMarkdown(e *errWriter, res *analysis.Result) {
	e.printf("\n### Runs\n\n| run | side | seconds | J | W | status | counted |\n|---|---|---|---|---|---|---|\n")
	for _, r := range res.Runs {
		counted := "yes"
		if !r.Counted() {
			counted = "no: " + r.Excluded
		}
		e.printf("| %d | %s | %.3f | %s | %s | %d | %s |\n", r.Run, r.Side, r.Seconds, num(r.Joules, 1), num(r.PkgWatts, 2), r.ExitCode, counted)
	}
}

// writeNotesMarkdown writes the footnotes and notes below a table, one
// paragraph line each.
func writeNotesMarkdown(e *errWriter, fn footnotes, notes []string) {
	if len(fn)+len(notes) == 0 {
		return
	}
	e.printf("\n")
	for _, l := range fn.lines() {
		e.printf("%s  \n", l)
	}
	for _, n := range notes {
		e.printf("*Note:* %s  \n", n)
	}
}

// writeContextMarkdown writes the context block as a table per block.
func writeContextMarkdown(e *errWriter, res *analysis.Result) {
	for _, b := range words.ContextBlocks(res.Sources, res.Contexts) {
		e.printf("\n### Context%s\n\n| | |\n|---|---|\n", mdCell(b.Of()))
		for _, r := range b.Rows {
			e.printf("| %s | %s |\n", r.Key, mdCell(r.Value))
		}
	}
}

// mdCell escapes what would end a Markdown table cell or start markup.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;", ">", "&gt;", "`", "\\`", "*", `\*`, "_", `\_`).Replace(s)
}
