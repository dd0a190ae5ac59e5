// SPDX-License-Identifier: Apache-2.0

package report

import (
	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/reports/report/internal/words"
)

// multiStats are an experiment's N-side comparisons (analysis.Result's
// Multi) as hwpprobe stat's: the time, then the energy.
func multiStats(res *analysis.Result) []*Stat {
	var out []*Stat
	for _, mf := range res.Multi {
		in := StatInput{Samples: mf.Samples, Short: res.Labels(), Name: mf.Name, Unit: mf.Unit,
			Reference: res.Reference, Stats: res.Options}
		out = append(out, newStat(in, mf.Multi))
	}
	return out
}

// multiWarnings are the warnings that multiStats's tables print.
func multiWarnings(res *analysis.Result) []string {
	var out []string
	for _, mf := range res.Multi {
		for _, s := range mf.Samples {
			out = append(out, analysis.SideWarnings(s.Label, s.Values)...)
		}
	}
	return out
}

// writeMultiText writes the N-side comparisons, each as stat's table.
func writeMultiText(e *errWriter, res *analysis.Result) {
	for _, st := range multiStats(res) {
		e.printf("\n")
		writeStatBody(e, st)
	}
}

// writeMultiMarkdown writes the N-side comparisons as Markdown tables.
func writeMultiMarkdown(e *errWriter, res *analysis.Result) {
	for _, st := range multiStats(res) {
		mc, in := st.Multi, st.In
		e.printf("\n### %s (%s): each side vs %s (median ± %.0f%% interval; U test, Holm-adjusted; ratio with simultaneous interval)\n\n",
			in.Name, in.Unit, in.Short[in.Reference], 100*mc.Confidence)
		e.printf("| side | median ± CI | vs %s | p | ratio [interval] |\n|---|---|---|---|---|\n", in.Short[in.Reference])
		var fn footnotes
		for i, s := range in.Samples {
			cell := mdCell(words.Interval(mc.Sides[i])) + fn.mark(mc.Sides[i].Warnings)
			if i == in.Reference {
				e.printf("| %s | %s | (reference) | | |\n", s.Label, cell)
				continue
			}
			sc := comparisonOf(mc, i)
			c := sc.Test
			e.printf("| %s | %s | %s | %s%s | %.3f [%s, %s] at %s%% |\n", s.Label, cell, sc.Delta(), sc.PString(), fn.mark(c.Warnings),
				c.Ratio, num(c.RatioLo, 3), words.Bound(c.RatioHi), words.TrimFloat(100*c.RatioConfidence))
		}
		writeNotesMarkdown(e, fn, st.Notes)
		e.printf("\n")
		for _, v := range st.Verdicts {
			e.printf("- %s\n", v)
		}
	}
}

// jsonMulti is one figure of an N-side comparison (schema SchemaN).
type jsonMulti struct {
	Name            string           `json:"name"`
	Unit            string           `json:"unit"`
	Reference       string           `json:"reference"`
	Alpha           jnum             `json:"alpha"`
	Confidence      jnum             `json:"confidence"`
	RatioConfidence jnum             `json:"ratio_confidence"`
	Sides           []jsonSummary    `json:"sides"`
	Comparisons     []jsonComparison `json:"comparisons"`
	Verdicts        []string         `json:"verdicts"`
	Notes           []string         `json:"notes,omitempty"`
}

// jsonComparison is one side compared with the reference.
type jsonComparison struct {
	Side        string   `json:"side"`
	P           jnum     `json:"p"`
	PHolm       jnum     `json:"p_holm"`
	Significant bool     `json:"significant"`
	Delta       string   `json:"delta"`
	Ratio       jnum     `json:"ratio"`
	RatioLo     jnum     `json:"ratio_lo"`
	RatioHi     jnum     `json:"ratio_hi"`
	Warnings    []string `json:"warnings,omitempty"`
	Notes       []string `json:"notes,omitempty"`
}

func multiJSON(res *analysis.Result) []jsonMulti {
	var out []jsonMulti
	for _, st := range multiStats(res) {
		mc := st.Multi
		j := jsonMulti{Name: st.In.Name, Unit: st.In.Unit, Reference: mc.Labels[mc.Reference], Alpha: jnum(mc.Alpha),
			Confidence: jnum(mc.Confidence), RatioConfidence: jnum(mc.RatioConfidence), Verdicts: st.Verdicts, Notes: st.Notes}
		for _, s := range mc.Sides {
			j.Sides = append(j.Sides, summaryJSON(s))
		}
		for _, sc := range mc.Comparisons {
			c := sc.Test
			j.Comparisons = append(j.Comparisons, jsonComparison{Side: mc.Labels[sc.Side], P: jnum(c.P), PHolm: jnum(sc.PHolmFloat()),
				Significant: sc.Significant, Delta: sc.Delta(), Ratio: jnum(c.Ratio), RatioLo: jnum(c.RatioLo), RatioHi: jnum(c.RatioHi),
				Warnings: c.Warnings, Notes: sc.Notes})
		}
		out = append(out, j)
	}
	return out
}
