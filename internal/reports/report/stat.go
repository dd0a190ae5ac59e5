// SPDX-License-Identifier: Apache-2.0

package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/reports/report/internal/words"
)

// StatSchema names the JSON of hwpprobe stat; docs/stat.md describes it.
const StatSchema = "hwpprobe-stat/1"

// StatInput is what hwpprobe stat compares: one sample per file.
type StatInput struct {
	Files   []string
	Samples []analysis.Sample // labelled "A (a.txt)", "B (b.txt)", ...
	Short   []string          // the sides' letters: "A", "B", ...
	// Name and Unit name the figure: the benchmark's name and unit, or
	// "value" and "" for plain numbers.
	Name, Unit string
	Reference  int
	Stats      analysis.Options
}

// Stat is an analysed StatInput.
type Stat struct {
	In    StatInput
	Multi analysis.MultiComparison
	// Verdicts, Needed, Warnings and Notes are per comparison (Needed nil
	// where the comparison is significant) or, for Warnings, per side.
	Verdicts []string
	Needed   []*analysis.RunsNeeded
	Warnings []string
	Notes    []string
}

// AnalyzeStat compares every sample with the reference (analysis.CompareN).
func AnalyzeStat(in StatInput) (*Stat, error) {
	mc, err := analysis.CompareN(in.Samples, in.Reference, in.Stats)
	if err != nil {
		return nil, err
	}
	return newStat(in, mc), nil
}

// newStat is the Stat of a comparison made: the verdicts, the runs a
// non-significant comparison would need, the warnings and notes.
func newStat(in StatInput, mc analysis.MultiComparison) *Stat {
	st := &Stat{In: in, Multi: mc}
	for _, s := range in.Samples {
		st.Warnings = append(st.Warnings, analysis.SideWarnings(s.Label, s.Values)...)
	}
	less, more := "lower", "higher"
	if isTime(in.Unit) {
		less, more = "faster", "slower"
	}
	st.Verdicts = mc.Verdicts(in.Name, in.Short, less, more)
	ref := in.Samples[in.Reference]
	for _, sc := range mc.Comparisons {
		side := in.Samples[sc.Side]
		var need *analysis.RunsNeeded
		if !sc.Significant {
			if r, ok := analysis.RunsToReach(ref.Values, side.Values, firstStepLevel(mc)); ok {
				need = &r
			}
		}
		st.Needed = append(st.Needed, need)
		for _, n := range sc.Notes {
			st.Notes = append(st.Notes, side.Label+": "+n)
		}
	}
	if n := mc.Note(); n != "" {
		st.Notes = append(st.Notes, n)
	}
	return st
}

// firstStepLevel is alpha/m for m comparisons: Holm's first step tests
// the smallest p at that level, so reaching it is enough for any side.
func firstStepLevel(mc analysis.MultiComparison) float64 {
	return mc.Alpha / float64(len(mc.Comparisons))
}

// isTime reports whether values of the unit are times, lower being faster:
// plain numbers (per-run seconds) and Go benchmarks' time units.
func isTime(unit string) bool {
	switch unit {
	case "", "s", "sec", "sec/op", "ns/op", "us/op", "ms/op":
		return true
	}
	return false
}

// neededText says how many runs per side would reach the level.
func (st *Stat) neededText(k int) string {
	r := st.Needed[k]
	sc := st.Multi.Comparisons[k]
	ref, side := st.In.Samples[st.In.Reference], st.In.Samples[sc.Side]
	sep := fmt.Sprintf("%.0f%% of the pairs of values in the other order", 100*r.Pairs)
	if r.Pairs == 0 {
		where := "below"
		if st.Multi.Sides[sc.Side].Median > st.Multi.Sides[st.In.Reference].Median {
			where = "above"
		}
		sep = fmt.Sprintf("every value of %s %s every value of %s", st.In.Short[sc.Side], where, st.In.Short[st.In.Reference])
	}
	lvl := fmt.Sprintf("alpha %v", st.Multi.Alpha)
	if len(st.Multi.Comparisons) > 1 {
		lvl = fmt.Sprintf("alpha/%d = %.4g (Holm's first step)", len(st.Multi.Comparisons), firstStepLevel(st.Multi))
	}
	if r.N == 0 {
		return fmt.Sprintf("%s vs %s: with the same separation (%s), not even 50 runs per side would reach p <= %s", side.Label, ref.Label, sep, lvl)
	}
	return fmt.Sprintf("%s vs %s: with the same separation (%s), %d runs per side would give p = %s <= %s", side.Label, ref.Label, sep, r.N, r.P, lvl)
}

// WriteStatText writes stat's report: each side's values, the statistics
// table with benchstat's footnotes, the notes, the warnings, the runs a
// non-significant comparison would need, and the verdicts.
func WriteStatText(w io.Writer, st *Stat) error {
	e := &errWriter{w: w}
	for _, s := range st.In.Samples {
		e.printf("%s: %d values: %s\n", s.Label, len(s.Values), strings.Trim(fmt.Sprint(s.Values), "[]"))
	}
	e.printf("\n")
	writeStatBody(e, st)
	return e.err
}

// writeStatBody writes the statistics table with benchstat's footnotes,
// the notes, the warnings, the runs needed and the verdicts.
func writeStatBody(e *errWriter, st *Stat) {
	mc, in := st.Multi, st.In
	width := len("figure")
	for _, s := range in.Samples {
		width = max(width, len(s.Label))
	}
	what := in.Name
	if in.Unit != "" {
		what += " (" + in.Unit + ")"
	}
	var fn footnotes
	e.printf("%-*s  %-18s %s\n", width, what, "median ± CI", "vs "+in.Short[in.Reference])
	for i, s := range in.Samples {
		if i == in.Reference {
			e.printf("%-*s  %-18s (reference)\n", width, s.Label, words.Interval(mc.Sides[i])+fn.mark(mc.Sides[i].Warnings))
			continue
		}
		sc := comparisonOf(mc, i)
		c := sc.Test
		p := c.PString()
		if len(mc.Comparisons) > 1 {
			p = sc.PString()
		}
		e.printf("%-*s  %-18s %s (%s)%s  ratio %s/%s %.3f [%.3f, %s] at %s%%\n", width, s.Label, words.Interval(mc.Sides[i])+fn.mark(mc.Sides[i].Warnings),
			sc.Delta(), p, fn.mark(c.Warnings), in.Short[i], in.Short[in.Reference], c.Ratio, c.RatioLo, words.Bound(c.RatioHi),
			words.TrimFloat(100*c.RatioConfidence))
	}
	writeNotesText(e, fn, st.Notes)
	for _, wn := range st.Warnings {
		e.printf("warning: %s\n", wn)
	}
	for k := range st.Needed {
		if st.Needed[k] != nil {
			e.printf("runs needed: %s\n", st.neededText(k))
		}
	}
	e.printf("\n")
	for _, v := range st.Verdicts {
		e.printf("verdict: %s\n", v)
	}
}

func comparisonOf(mc analysis.MultiComparison, side int) analysis.SideComparison {
	for _, sc := range mc.Comparisons {
		if sc.Side == side {
			return sc
		}
	}
	return analysis.SideComparison{}
}

type jsonStatSide struct {
	Label     string      `json:"label"`
	File      string      `json:"file"`
	Reference bool        `json:"reference"`
	Summary   jsonSummary `json:"summary"`
}

type jsonRunsNeeded struct {
	Pairs jnum   `json:"pairs_out_of_order"`
	N     int    `json:"runs_per_side"` // 0: none up to 50
	P     string `json:"p,omitempty"`
	Level jnum   `json:"level"`
}

type jsonStatComparison struct {
	Side string `json:"side"`
	jsonFigure
	PExact           string          `json:"p_exact,omitempty"`
	PHolm            jnum            `json:"p_holm"`
	SignificantAlone bool            `json:"significant_alone"`
	Verdict          string          `json:"verdict"`
	RunsNeeded       *jsonRunsNeeded `json:"runs_needed,omitempty"`
	SideNotes        []string        `json:"side_notes,omitempty"`
}

// StatJSON is the Go form of WriteStatJSON's document, for its schema
// (docs/schemas/stat.schema.json).
type StatJSON = jsonStat

type jsonStat struct {
	Schema          string               `json:"schema"`
	Version         string               `json:"hwpprobe_version"`
	Alpha           jnum                 `json:"alpha"`
	Confidence      jnum                 `json:"confidence"`
	RatioConfidence jnum                 `json:"ratio_confidence"`
	Adjustment      string               `json:"adjustment"`
	Name            string               `json:"name"`
	Unit            string               `json:"unit"`
	Sides           []jsonStatSide       `json:"sides"`
	Comparisons     []jsonStatComparison `json:"comparisons"`
	Warnings        []string             `json:"warnings"`
	Notes           []string             `json:"notes"`
}

// WriteStatJSON writes stat's report as one JSON object (schema
// StatSchema): each comparison carries the fields of diff's figures.
func WriteStatJSON(w io.Writer, st *Stat, info Info) error {
	mc, in := st.Multi, st.In
	j := jsonStat{Schema: StatSchema, Version: info.Version, Alpha: jnum(mc.Alpha), Confidence: jnum(mc.Confidence),
		RatioConfidence: jnum(mc.RatioConfidence), Adjustment: "none", Name: in.Name, Unit: in.Unit,
		Warnings: append([]string{}, st.Warnings...), Notes: append([]string{}, st.Notes...)}
	if len(mc.Comparisons) > 1 {
		j.Adjustment = "holm"
	}
	for i, s := range in.Samples {
		j.Sides = append(j.Sides, jsonStatSide{Label: s.Label, File: in.Files[i], Reference: i == in.Reference, Summary: summaryJSON(mc.Sides[i])})
	}
	for k, sc := range mc.Comparisons {
		c := sc.Test
		c.Significant = sc.Significant
		jc := jsonStatComparison{Side: in.Samples[sc.Side].Label, jsonFigure: figureJSON(analysis.Figure{Name: in.Name, Unit: in.Unit, Comparison: c}),
			PHolm: jnum(sc.PHolmFloat()), SignificantAlone: sc.Test.Significant, Verdict: st.Verdicts[k], SideNotes: sc.Notes}
		if c.PExact != nil {
			jc.PExact = fraction(*c.PExact)
		}
		if r := st.Needed[k]; r != nil {
			jc.RunsNeeded = &jsonRunsNeeded{Pairs: jnum(r.Pairs), N: r.N, Level: jnum(firstStepLevel(mc))}
			if r.N > 0 {
				jc.RunsNeeded.P = fraction(r.P)
			}
		}
		j.Comparisons = append(j.Comparisons, jc)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}

// fraction is an exact p-value as its count over its total: "2/20".
func fraction(p analysis.ExactP) string {
	return p.Count.String() + "/" + p.Total.String()
}
