package htmlreport

import (
	"fmt"
	"math"

	"github.com/hwpprobe/hwpprobe/analysis"
)

func newChart(id, section, title string) Chart {
	return Chart{ID: id, Section: section, Title: title, XMin: Number(NaN), XMax: Number(NaN), YMin: Number(NaN), YMax: Number(NaN)}
}

// runCharts are the per-run charts of an experiment: wall time and
// package energy of every measured run, both sides, with each side's
// median and its interval.
func runCharts(res *analysis.Result) []Chart {
	var out []Chart
	time := runChart(res, "runs-time", "Wall time per run", "time", "s", func(r analysis.RunResult) float64 { return r.Seconds })
	out = append(out, time)
	for _, f := range res.Figures {
		if f.Name == "energy" {
			out = append(out, runChart(res, "runs-energy", "Package energy per run", "energy", "J",
				func(r analysis.RunResult) float64 { return r.Joules }))
		}
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
	cols := [3]Numbers{}
	for _, r := range runs {
		c.X = append(c.X, float64(r.Order+1))
		for k := range cols {
			cols[k] = append(cols[k], NaN)
		}
		v := value(r)
		switch {
		case !r.Counted():
			cols[2][len(cols[2])-1] = v
		case r.Side == res.Sides[0].Label:
			cols[0][len(cols[0])-1] = v
		case r.Side == res.Sides[1].Label:
			cols[1][len(cols[1])-1] = v
		}
	}
	for i, s := range res.Sides {
		c.Series = append(c.Series, Series{Label: s.Label, Color: sideColors[i], Kind: KindPoints, Values: cols[i], Size: 9})
	}
	if hasFinite(cols[2]) {
		c.Series = append(c.Series, Series{Label: "left out", Color: "#d62f5a", Kind: KindPoints, Values: cols[2], Size: 6})
	}
	c.XMin, c.XMax = Number(0.5), Number(float64(len(runs))+0.5)
	fig, ok := findFigure(res, figure)
	if !ok {
		return c
	}
	cmp := fig.Comparison
	var notes []string
	for i, s := range [2]analysis.Summary{cmp.A, cmp.B} {
		c.HLines = append(c.HLines, HLine{Label: res.Sides[i].Label + " median " + fmtNum(s.Median, unit), Value: s.Median,
			Color: sideColors[i], Dash: true})
		if s.Finite() {
			c.HSpans = append(c.HSpans, HSpan{Lo: s.Lo, Hi: s.Hi, Color: sideColors[i]})
			notes = append(notes, fmt.Sprintf("%s %s [%s, %s] at %.0f%%", res.Sides[i].Label, fmtNum(s.Median, unit),
				fmtNum(s.Lo, ""), fmtNum(s.Hi, ""), 100*s.Confidence))
		} else {
			notes = append(notes, fmt.Sprintf("%s %s (interval ± ∞: too few runs)", res.Sides[i].Label, fmtNum(s.Median, unit)))
		}
	}
	c.Note = "medians dashed, intervals shaded: " + notes[0] + "; " + notes[1] + "; B vs A " + cmp.Delta() + " " + cmp.PString()
	return c
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
