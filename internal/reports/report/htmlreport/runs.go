// SPDX-License-Identifier: Apache-2.0

package htmlreport

import (
	"fmt"
	"math"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
)

func newChart(id, section, title string) Chart {
	return Chart{ID: id, Section: section, Title: title, XMin: Number(NaN), XMax: Number(NaN), YMin: Number(NaN), YMax: Number(NaN)}
}

// runCharts are the per-run charts of an experiment: wall time and
// package energy of every measured run, every side, with each side's
// median and its interval.
func runCharts(res *analysis.Result) []Chart {
	var out []Chart
	time := runChart(res, "runs-time", "Wall time per run", "time", "s", func(r analysis.RunResult) float64 { return r.Seconds })
	out = append(out, time)
	if _, ok := summaries(res, "energy"); ok {
		out = append(out, runChart(res, "runs-energy", "Package energy per run", "energy", "J",
			func(r analysis.RunResult) float64 { return r.Joules }))
	}
	return out
}

func runChart(res *analysis.Result, id, title, figure, unit string, value func(analysis.RunResult) float64) Chart {
	c := newChart(id, "runs", title)
	c.XLabel, c.YLabel, c.YUnit = "measured run (in order)", title+" ("+unit+")", unit
	c.Height, c.XWhole = 240, true
	var runs []analysis.RunResult
	for _, r := range res.Runs {
		if !r.Warmup {
			runs = append(runs, r)
		}
	}
	n := len(res.Sides)
	cols := make([]Numbers, n+1) // each side's, then the runs left out
	for _, r := range runs {
		c.X = append(c.X, float64(r.Order+1))
		for k := range cols {
			cols[k] = append(cols[k], NaN)
		}
		v := value(r)
		if i := res.SideIndex(r.Side); !r.Counted() {
			cols[n][len(cols[n])-1] = v
		} else if i >= 0 {
			cols[i][len(cols[i])-1] = v
		}
	}
	for i, s := range res.Sides {
		c.Series = append(c.Series, Series{Label: s.Label, Color: sideColor(i), Kind: KindPoints, Values: cols[i], Size: 9})
	}
	if hasFinite(cols[n]) {
		c.Series = append(c.Series, Series{Label: "left out", Color: "#d62f5a", Kind: KindPoints, Values: cols[n], Size: 6})
	}
	c.XMin, c.XMax = Number(0.5), Number(float64(len(runs))+0.5)
	sums, ok := summaries(res, figure)
	if !ok {
		return c
	}
	var notes []string
	for i, s := range sums {
		c.HLines = append(c.HLines, HLine{Label: res.Sides[i].Label + " median " + fmtNum(s.Median, unit), Value: s.Median,
			Color: sideColor(i), Dash: true})
		if s.Finite() {
			c.HSpans = append(c.HSpans, HSpan{Lo: s.Lo, Hi: s.Hi, Color: sideColor(i)})
			notes = append(notes, fmt.Sprintf("%s %s [%s, %s] at %.0f%%", res.Sides[i].Label, fmtNum(s.Median, unit),
				fmtNum(s.Lo, ""), fmtNum(s.Hi, ""), 100*s.Confidence))
		} else {
			notes = append(notes, fmt.Sprintf("%s %s (interval ± ∞: too few runs)", res.Sides[i].Label, fmtNum(s.Median, unit)))
		}
	}
	c.Note = "medians dashed, intervals shaded: " + strings.Join(notes, "; ") + "; " + versus(res, figure)
	return c
}

// summaries are each side's median and interval of a figure; ok is false
// when the figure was not compared.
func summaries(res *analysis.Result, figure string) ([]analysis.Summary, bool) {
	if len(res.Multi) > 0 {
		mf, ok := findMulti(res, figure)
		return mf.Multi.Sides, ok
	}
	if fig, ok := findFigure(res, figure); ok {
		return []analysis.Summary{fig.Comparison.A, fig.Comparison.B}, true
	}
	return nil, false
}

// versus is the comparison of a figure in words: "B vs A -3.1% p=...",
// one per side against the reference with more sides.
func versus(res *analysis.Result, figure string) string {
	if mf, ok := findMulti(res, figure); ok {
		mc := mf.Multi
		var parts []string
		for _, sc := range mc.Comparisons {
			parts = append(parts, fmt.Sprintf("%s vs %s %s %s", mc.Labels[sc.Side], mc.Labels[mc.Reference], sc.Delta(), sc.PString()))
		}
		return strings.Join(parts, "; ")
	}
	fig, _ := findFigure(res, figure)
	return "B vs A " + fig.Comparison.Delta() + " " + fig.Comparison.PString()
}

// findMulti is a figure's N-side comparison (an experiment of more than
// two sides).
func findMulti(res *analysis.Result, name string) (analysis.MultiFigure, bool) {
	for _, mf := range res.Multi {
		if mf.Name == name {
			return mf, true
		}
	}
	return analysis.MultiFigure{}, false
}

func findFigure(res *analysis.Result, name string) (analysis.Figure, bool) {
	if name == "time" {
		return res.Time, true
	}
	for _, f := range res.Figures {
		if f.Name == name {
			return f, true
		}
	}
	return analysis.Figure{}, false
}

func hasFinite(v []float64) bool {
	for _, x := range v {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			return true
		}
	}
	return false
}

// fmtNum is v with 4 significant digits (at least the units), and its
// unit; "-" when not finite.
func fmtNum(v float64, unit string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	s := fmt.Sprintf("%.4g", v)
	if math.Abs(v) >= 1e4 {
		s = fmt.Sprintf("%.0f", v)
	}
	if unit != "" {
		s += " " + unit
	}
	return s
}
