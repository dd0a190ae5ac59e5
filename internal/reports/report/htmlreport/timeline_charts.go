// SPDX-License-Identifier: Apache-2.0

package htmlreport

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/analysis/timeline"
)

// coreGroups are the core types a run's series have for figure, in the
// timeline's order; "all" only when there is no core type (not hybrid).
func coreGroups(r *timeline.Run, figure string) []string {
	var groups []string
	for _, s := range r.Series {
		if s.Figure == figure && s.Group != "package" && !strings.HasPrefix(s.Group, "cpu") && !slices.Contains(groups, s.Group) {
			groups = append(groups, s.Group)
		}
	}
	if len(groups) > 1 {
		groups = slices.DeleteFunc(groups, func(g string) bool { return g == "all" })
	}
	return groups
}

func findSeries(r *timeline.Run, figure, group string) *timeline.Series {
	for i := range r.Series {
		if r.Series[i].Figure == figure && r.Series[i].Group == group {
			return &r.Series[i]
		}
	}
	return nil
}

// spread adds a series' mean as a line and its minimum and maximum as
// thin lines with the band between them.
func spread(tracks []track, bands []Band, s *timeline.Series, label, color string) ([]track, []Band) {
	n := len(tracks)
	tracks = append(tracks,
		track{s: Series{Label: label, Color: color, Kind: KindLine, Width: 1.8}, t: s.T, v: s.Mean},
		track{s: Series{Label: label + " min", Color: color, Kind: KindLine, Width: 0.5, Aux: true}, t: s.T, v: s.Min},
		track{s: Series{Label: label + " max", Color: color, Kind: KindLine, Width: 0.5, Aux: true}, t: s.T, v: s.Max})
	return tracks, append(bands, Band{Hi: n + 2, Lo: n + 1, Color: color})
}

// perType draws figure per core type (mean, minimum to maximum).
func perType(c *Chart, col column, figure, unit string, more func([]track) []track) {
	c.ZeroBased = true
	var tracks []track
	for _, g := range coreGroups(col.Run, figure) {
		tracks, c.Bands = spread(tracks, c.Bands, findSeries(col.Run, figure, g), g+" "+figure, coreTypeColor(g))
	}
	if more != nil {
		tracks = more(tracks)
	}
	finish(c, tracks, unit, "no "+figure+" samples in this run")
}

// finish aligns the tracks, or says why the chart is empty.
func finish(c *Chart, tracks []track, unit, empty string) {
	c.YUnit = unit
	if len(tracks) == 0 {
		c.EmptyText = empty
		c.X = Numbers{}
		return
	}
	align(c, tracks)
}

func mhzChart(c *Chart, col column) {
	c.Title, c.YLabel = "Delivered frequency per core type", "Avg_MHz (MHz)"
	perType(c, col, "Avg_MHz", "MHz", func(tracks []track) []track {
		for _, g := range coreGroups(col.Run, "Bzy_MHz") {
			s := findSeries(col.Run, "Bzy_MHz", g)
			tracks = append(tracks, track{s: Series{Label: g + " Bzy_MHz", Color: coreTypeColor(g), Kind: KindLine, Dash: true, Hidden: true},
				t: s.T, v: s.Mean})
		}
		return tracks
	})
}

func busyChart(c *Chart, col column) {
	c.Title, c.YLabel = "Busy per core type", "Busy (%)"
	perType(c, col, "Busy%", "%", nil)
}

// powerFigures are the RAPL domains drawn, in order.
var powerFigures = []string{"PkgWatt", "CorWatt", "GFXWatt", "RAMWatt", "SysWatt"}

func powerChart(c *Chart, col column) {
	c.Title, c.YLabel, c.ZeroBased = "Package and core power, with PL1 and PL2", "power (W)", true
	var tracks []track
	for i, f := range powerFigures {
		s := findSeries(col.Run, f, "package")
		if s == nil {
			continue
		}
		if f == "PkgWatt" {
			tracks, c.Bands = spread(tracks, c.Bands, s, f, palette[1])
			continue
		}
		tracks = append(tracks, track{s: Series{Label: f, Color: palette[2+i], Kind: KindLine, Width: 1.5}, t: s.T, v: s.Mean})
	}
	if len(tracks) > 0 {
		tracks = append(tracks, limitTracks(col.Run)...)
	}
	finish(c, tracks, "W", "no power measured in this run (no RAPL)")
}

// limitTracks are PL1 and PL2 as steps: the snapshot's, then each write.
func limitTracks(r *timeline.Run) []track {
	var out []track
	for i, name := range []string{"PL1", "PL2"} {
		tr := track{s: Series{Label: name, Color: []string{"#d62f5a", "#9a7b00"}[i], Kind: KindStep, Dash: true, Width: 1.5},
			hold: true, until: r.Seconds}
		for _, pl := range r.PowerLimits {
			if v := []*float64{pl.PL1W, pl.PL2W}[i]; v != nil {
				tr.t, tr.v = append(tr.t, pl.T), append(tr.v, *v)
			}
		}
		if len(tr.t) > 0 {
			out = append(out, tr)
		}
	}
	return out
}

func tempChart(c *Chart, col column) {
	c.Title, c.YLabel = "Temperatures, with TjMax", "temperature (°C)"
	var tracks []track
	if s := findSeries(col.Run, "PkgTmp", "package"); s != nil {
		tracks = append(tracks, track{s: Series{Label: "PkgTmp (hottest)", Color: palette[4], Kind: KindLine, Width: 1.8}, t: s.T, v: s.Max})
	}
	for _, g := range coreGroups(col.Run, "CoreTmp") {
		s := findSeries(col.Run, "CoreTmp", g)
		tracks = append(tracks, track{s: Series{Label: g + " CoreTmp (hottest)", Color: coreTypeColor(g), Kind: KindLine, Width: 1.3}, t: s.T, v: s.Max})
	}
	if len(tracks) > 0 && col.Run.TjMaxC != nil {
		c.HLines = append(c.HLines, HLine{Label: fmt.Sprintf("TjMax %.0f °C", *col.Run.TjMaxC), Value: *col.Run.TjMaxC, Color: "#d62f5a", Dash: true})
	}
	finish(c, tracks, "°C", "no temperature sampled in this run")
}

// laneName names a band's lane: the limit reason, or the excursion and
// its core type.
func laneName(b timeline.Band, excursion bool) string {
	if excursion {
		return "HWP excursion " + b.Group
	}
	return b.Name
}

// laneNames are the lanes of every column's bands, so that a row's
// charts have the same lanes.
func laneNames(cols []column) []string {
	var names []string
	for _, col := range cols {
		for k, bands := range [][]timeline.Band{col.Run.LimitReasons, col.Run.Excursions} {
			for _, b := range bands {
				if n := laneName(b, k == 1); !slices.Contains(names, n) {
					names = append(names, n)
				}
			}
		}
	}
	return names
}

// limitChart draws each limit reason and HWP excursion as a lane, thick
// where it held in some sample.
func limitChart(lanes []string) func(*Chart, column) {
	return func(c *Chart, col column) {
		c.Title, c.Lanes, c.Height = "Limit reasons and HWP excursions", lanes, laneHeight(len(lanes))
		var tracks []track
		for i, name := range lanes {
			tr := track{s: Series{Label: name, Color: palette[i%len(palette)], Kind: KindLane}}
			for k, bands := range [][]timeline.Band{col.Run.LimitReasons, col.Run.Excursions} {
				for _, b := range bands {
					if laneName(b, k == 1) == name {
						tr.t, tr.v = append(tr.t, b.From, b.To), append(tr.v, float64(i+1), float64(i+1))
					}
				}
			}
			if len(tr.t) > 0 {
				tracks = append(tracks, tr)
			}
		}
		why := "no limit reason or excursion in this run"
		if col.Run.LimitTable == "" && len(col.Run.LimitReasons) == 0 {
			why = "no limit reason active (or MSR_CORE_PERF_LIMIT_REASONS not sampled) in this run"
		}
		finish(c, tracks, "", why)
	}
}

// requestChart draws the HWP request's min, max and EPP (and desired,
// when set) per core type as steps: the highest value any CPU of the type
// held, and the lowest, dashed, where they differ.
func requestChart(c *Chart, col column) {
	c.Title, c.YLabel, c.ZeroBased = "HWP request per core type", "level, EPP (0-255)", true
	if len(col.Run.Requests) > 0 && col.Run.Requests[0].Register != "IA32_HWP_REQUEST" {
		c.Title = col.Run.Requests[0].Register + " per core type" // AMD's CPPC request
	}
	var tracks []track
	for _, st := range col.Run.Requests {
		if st.Field == "desired" && !slices.ContainsFunc(st.Steps, func(s timeline.Step) bool { return s.Hi > 0 }) {
			continue
		}
		hi := track{s: Series{Label: st.Group + " " + st.Field, Color: coreTypeColor(st.Group), Kind: KindStep, Width: fieldWidth(st.Field),
			Dash: st.Field == "epp"}, hold: true, until: col.Run.Seconds}
		lo := hi
		lo.s.Label, lo.s.Width, lo.s.Dash = st.Group+" "+st.Field+" (lowest CPU)", 1, true
		differ := false
		for _, s := range st.Steps {
			hi.t, hi.v = append(hi.t, s.T), append(hi.v, s.Hi)
			lo.t, lo.v = append(lo.t, s.T), append(lo.v, s.Lo)
			differ = differ || s.Lo != s.Hi
		}
		tracks = append(tracks, hi)
		if differ {
			tracks = append(tracks, lo)
		}
	}
	finish(c, tracks, "", "the HWP request was not sampled in this run")
}

func fieldWidth(f string) float64 {
	switch f {
	case "max":
		return 2.5
	case "epp":
		return 1.8
	}
	return 1.4
}

// laneHeight is the height of a chart of n lanes.
func laneHeight(n int) int { return 90 + 24*n }

// maxCPULegend is the most CPUs the per-CPU chart names in its legend.
const maxCPULegend = 32

// perCPUChart draws Avg_MHz of every CPU (timeline.Options.PerCPU), each
// bucket's mean.
func perCPUChart(c *Chart, col column) {
	c.Title, c.YLabel, c.ZeroBased = "Delivered frequency per CPU", "Avg_MHz (MHz)", true
	var tracks []track
	n := 0
	for _, s := range col.Run.Series {
		if s.Figure == "Avg_MHz" && strings.HasPrefix(s.Group, "cpu") {
			n++
		}
	}
	for _, s := range col.Run.Series {
		if s.Figure != "Avg_MHz" || !strings.HasPrefix(s.Group, "cpu") {
			continue
		}
		color := palette[len(tracks)%len(palette)]
		tracks = append(tracks, track{s: Series{Label: s.Group, Color: color, Kind: KindLine, Width: 1, Aux: n > maxCPULegend}, t: s.T, v: s.Mean})
	}
	finish(c, tracks, "MHz", "no per-CPU series (hwpprobe report --per-cpu)")
}
