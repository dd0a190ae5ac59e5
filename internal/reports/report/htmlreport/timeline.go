// SPDX-License-Identifier: Apache-2.0

package htmlreport

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/analysis/timeline"
)

// column is one run drawn as a column of timelines: a side's
// representative run, or a run of a recording.
type column struct {
	Title string
	Short string // "A run 7"
	Side  int    // colour index
	Run   *timeline.Run
}

// timelineGroup is the zoom group of every timeline chart: zooming one
// zooms all, both sides, to the same seconds.
const timelineGroup = "timeline"

// diffColumns picks, per side, the counted run whose wall time is the
// side's median (the lower of the two middle ones), as the run whose
// timeline the page draws.
func diffColumns(res *analysis.Result, tl *timeline.Timeline) []column {
	var cols []column
	for i, s := range res.Sides {
		var runs []analysis.RunResult
		for _, r := range res.Runs {
			if r.Side == s.Label && r.Counted() {
				runs = append(runs, r)
			}
		}
		if len(runs) == 0 {
			continue
		}
		sort.SliceStable(runs, func(a, b int) bool { return runs[a].Seconds < runs[b].Seconds })
		m := runs[(len(runs)-1)/2]
		if tr := findRun(tl, m.Source, m.Run); tr != nil {
			title := fmt.Sprintf("%s: run %d, %.3f s (the side's median of %d counted runs)", s.Label, m.Run, m.Seconds, len(runs))
			cols = append(cols, column{Title: title, Short: fmt.Sprintf("%s run %d", s.Label, m.Run), Side: i, Run: tr})
		}
	}
	return cols
}

// maxRecordColumns bounds the runs of a recording drawn side by side.
const maxRecordColumns = 4

// recordColumns draws a recording's runs, the first maxRecordColumns.
func recordColumns(tl *timeline.Timeline) ([]column, []string) {
	var cols []column
	var missing []string
	for i := range tl.Runs {
		r := &tl.Runs[i]
		if len(cols) == maxRecordColumns {
			missing = append(missing, fmt.Sprintf("timelines of runs after run %d are not drawn (the page draws %d runs)",
				cols[len(cols)-1].Run.Run, maxRecordColumns))
			break
		}
		title := fmt.Sprintf("run %d, %.3f s", r.Run, r.Seconds)
		if !r.Ended {
			title += " (cut short)"
		}
		cols = append(cols, column{Title: title, Short: fmt.Sprintf("run %d", r.Run), Side: i % 2, Run: r})
	}
	return cols, missing
}

func findRun(tl *timeline.Timeline, source string, run int) *timeline.Run {
	for i := range tl.Runs {
		if tl.Runs[i].Source == source && tl.Runs[i].Run == run {
			return &tl.Runs[i]
		}
	}
	return nil
}

// timelineSection lays out the columns' timelines: one row per kind of
// chart, the columns side by side, on one time axis and, per row, one
// value axis.
func timelineSection(cols []column) Section {
	sec := Section{ID: "timelines", Title: "Timelines", Columns: len(cols),
		Intro: "Seconds from each run's start (writes before it, at negative times, set the run's settings). Lines are each bucket's mean over the core type's CPUs, shaded from its minimum to its maximum (decimated so that spikes survive). Drag across any timeline to zoom them all; double-click to zoom out; click a legend entry to hide or show it."}
	xmin, xmax := 0.0, 0.0
	for _, c := range cols {
		xmin, xmax = math.Min(xmin, firstTime(c.Run)), math.Max(xmax, c.Run.Seconds)
	}
	rows := [][]Chart{
		perColumn(cols, "mhz", "Delivered frequency", mhzChart),
		perColumn(cols, "cpumhz", "Delivered frequency per CPU", perCPUChart),
		perColumn(cols, "busy", "Busy", busyChart),
		perColumn(cols, "power", "Power", powerChart),
		perColumn(cols, "temp", "Temperature", tempChart),
		perColumn(cols, "limits", "Limit reasons and HWP excursions", limitChart(laneNames(cols))),
		perColumn(cols, "request", "HWP request", requestChart),
		perColumn(cols, "writes", "Register writes", writesChart(registerNames(cols))),
	}
	for _, row := range rows {
		if !slices.ContainsFunc(row, func(c Chart) bool { return c.EmptyText == "" }) {
			continue // nothing in any column
		}
		shareY(row)
		for i := range row {
			row[i].Section, row[i].Group = sec.ID, timelineGroup
			row[i].XMin, row[i].XMax = Number(xmin), Number(xmax)
			row[i].XLabel, row[i].XUnit = "seconds from the run's start", "s"
		}
		sec.Charts = append(sec.Charts, row...)
	}
	return sec
}

func perColumn(cols []column, id, title string, build func(*Chart, column)) []Chart {
	var row []Chart
	for i, col := range cols {
		c := newChart(fmt.Sprintf("tl-%s-%d", id, i), "", title)
		c.Note = col.Title
		build(&c, col)
		row = append(row, c)
	}
	return row
}

// shareY puts the charts of a row on one value scale, unless they fix
// their own (lanes).
func shareY(row []Chart) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range row {
		if c.Lanes != nil || c.EmptyText != "" {
			continue
		}
		for _, s := range c.Series {
			for _, v := range s.Values {
				if !math.IsNaN(v) && !math.IsInf(v, 0) {
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				}
			}
		}
		for _, l := range c.HLines {
			lo, hi = math.Min(lo, l.Value), math.Max(hi, l.Value)
		}
	}
	if math.IsInf(lo, 0) || hi <= lo {
		return
	}
	pad := (hi - lo) * 0.05
	lo = math.Max(0, lo-pad)
	if lo > 0 && (lo < (hi-lo) || row[0].ZeroBased) {
		lo = 0 // a scale that starts at 0 when the data come close
	}
	for i := range row {
		if row[i].Lanes == nil && row[i].EmptyText == "" {
			row[i].YMin, row[i].YMax = Number(lo), Number(hi+pad)
		}
	}
}

// firstTime is the earliest time of a run's timeline: 0, or a register
// write or request step before the run started.
func firstTime(r *timeline.Run) float64 {
	t := 0.0
	for _, w := range r.Writes {
		t = math.Min(t, w.T)
	}
	for _, st := range r.Requests {
		for _, s := range st.Steps {
			t = math.Min(t, s.T)
		}
	}
	return t
}
