// SPDX-License-Identifier: Apache-2.0

package png

import (
	"fmt"
	"image/color"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/hwpprobe/hwpprobe/internal/analysis/timeline"
)

// sideColors tell the sides apart (Okabe and Ito's colour-blind safe
// palette), in the order sides first appear.
var sideColors = []color.RGBA{
	{0x00, 0x72, 0xB2, 0xff}, {0xE6, 0x9F, 0x00, 0xff}, {0x00, 0x9E, 0x73, 0xff},
	{0xCC, 0x79, 0xA7, 0xff}, {0x56, 0xB4, 0xE9, 0xff}, {0xD5, 0x5E, 0x00, 0xff},
}

// dashes tell core types and figures apart within a side.
var dashes = [][]vg.Length{nil, {vg.Points(7), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(7), vg.Points(2), vg.Points(2), vg.Points(2)}}

// glyphs tell the sides apart in the run times chart.
var glyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.PyramidGlyph{}, draw.BoxGlyph{}, draw.RingGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}}

// sides numbers the sides in the order their runs come.
type sides []string

func sidesOf(tl *timeline.Timeline) sides {
	var s sides
	for _, r := range tl.Runs {
		if l := sideLabel(r); !slices.Contains(s, l) {
			s = append(s, l)
		}
	}
	return s
}

func (s sides) index(r timeline.Run) int { return slices.Index(s, sideLabel(r)) }

func (s sides) color(r timeline.Run) color.RGBA { return sideColors[s.index(r)%len(sideColors)] }

// sideLabel is the run's side with its settings, or its file's name for
// a plain recording.
func sideLabel(r timeline.Run) string {
	switch {
	case r.Side != "" && r.Profile != "":
		return r.Side + " (" + r.Profile + ")"
	case r.Side != "":
		return r.Side
	}
	return r.Source
}

// pick is one series of a run to draw, with its dash and legend label.
type pick struct {
	s     timeline.Series
	label string
	dash  int
}

// charts returns the charts in file order; a chart without data has a
// nil plot.
func charts(tl *timeline.Timeline) []chart {
	sd := sidesOf(tl)
	return []chart{
		timeChart(tl, sd, FileMHz, "Delivered frequency per core type (Avg_MHz)", "MHz", coreTypes("Avg_MHz"), nil),
		timeChart(tl, sd, FileBusy, "Busy% per core type (C0 share of the TSC)", "busy (%)", coreTypes("Busy%"), nil),
		timeChart(tl, sd, FilePower, "Package power with PL1 / PL2", "power (W)", figures("PkgWatt", "CorWatt", "RAMWatt"), powerLimits),
		timeChart(tl, sd, FileTemperature, "Temperatures with TjMax", "temperature (°C)", temperatures, tjMax),
		runTimes(tl, sd),
	}
}

// coreTypes picks a figure's series per core type, or "all" on a machine
// that is not hybrid.
func coreTypes(figure string) func(timeline.Run) []pick {
	return func(r timeline.Run) []pick {
		var out []pick
		for _, s := range r.Series {
			if s.Figure == figure && s.Group != "all" && s.Group != "package" && !strings.HasPrefix(s.Group, "cpu") {
				out = append(out, pick{s, s.Group, len(out)})
			}
		}
		if len(out) == 0 {
			for _, s := range r.Series {
				if s.Figure == figure && s.Group == "all" {
					out = append(out, pick{s, "all CPUs", 0})
				}
			}
		}
		return out
	}
}

// figures picks the package series of each figure.
func figures(names ...string) func(timeline.Run) []pick {
	return func(r timeline.Run) []pick {
		var out []pick
		for i, f := range names {
			for _, s := range r.Series {
				if s.Figure == f && s.Group == "package" {
					out = append(out, pick{s, f, i})
				}
			}
		}
		return out
	}
}

// temperatures picks the package temperature and each core type's
// hottest core.
func temperatures(r timeline.Run) []pick {
	out := figures("PkgTmp")(r)
	for _, p := range coreTypes("CoreTmp")(r) {
		p.label, p.dash = "CoreTmp "+p.label, p.dash+1
		out = append(out, p)
	}
	return out
}

// timeChart draws the picked series of every run but warm-ups against
// seconds from its start; extra adds to the plot (limit lines). Nil plot when no run
// has a point.
func timeChart(tl *timeline.Timeline, sd sides, file, title, unit string, picks func(timeline.Run) []pick,
	extra func(p *plot.Plot, l *legend, tl *timeline.Timeline, sd sides)) chart {
	p := newPlot(title, "time from the run's start (s)", unit)
	l := newLegend()
	points := 0
	for _, r := range tl.Runs {
		if r.Warmup {
			continue
		}
		col := sd.color(r)
		for _, pk := range picks(r) {
			if len(pk.s.T) == 0 {
				continue
			}
			points += len(pk.s.T)
			band, line := seriesLines(pk.s, r.BucketSeconds, col, pk.dash)
			p.Add(band, line)
			l.add(sideLabel(r)+": "+pk.label, line)
		}
	}
	if points == 0 {
		return chart{file: file}
	}
	if extra != nil {
		extra(p, l, tl, sd)
	}
	// From 0, with room above the highest line (TjMax, PL2) for the eye.
	p.Y.Min, p.Y.Max = 0, p.Y.Max*1.05
	return chart{file: file, plot: p, legend: l}
}

// seriesLines returns the band from each bucket's minimum to its maximum
// and the line through its means, at the buckets' middles.
func seriesLines(s timeline.Series, width float64, col color.RGBA, dash int) (*plotter.Polygon, *plotter.Line) {
	n := len(s.T)
	mean, band := make(plotter.XYs, n), make(plotter.XYs, 2*n)
	for i, t := range s.T {
		x := t + width/2
		mean[i] = plotter.XY{X: x, Y: s.Mean[i]}
		band[i] = plotter.XY{X: x, Y: s.Max[i]}
		band[2*n-1-i] = plotter.XY{X: x, Y: s.Min[i]}
	}
	poly, _ := plotter.NewPolygon(band)
	poly.Color = color.NRGBA{col.R, col.G, col.B, 0x40}
	poly.LineStyle.Width = 0
	line, _ := plotter.NewLine(mean)
	line.Color = col
	line.Width = vg.Points(1.5)
	line.Dashes = dashes[dash%len(dashes)]
	return poly, line
}

// powerLimits adds each run's PL1 and PL2 as steps (warm-ups left out).
func powerLimits(p *plot.Plot, l *legend, tl *timeline.Timeline, sd sides) {
	for _, r := range tl.Runs {
		if r.Warmup {
			continue
		}
		for k, name := range []string{"PL1", "PL2"} {
			var xys plotter.XYs
			for _, s := range r.PowerLimits {
				v := s.PL1W
				if k == 1 {
					v = s.PL2W
				}
				if v != nil {
					xys = append(xys, plotter.XY{X: s.T, Y: *v})
				}
			}
			if len(xys) == 0 {
				continue
			}
			xys = append(xys, plotter.XY{X: max(r.Seconds, xys[len(xys)-1].X), Y: xys[len(xys)-1].Y})
			line, _ := plotter.NewLine(xys)
			line.StepStyle = plotter.PostStep
			line.Color = sd.color(r)
			line.Width = vg.Points(1 + float64(1-k))
			line.Dashes = []vg.Length{vg.Points(10), vg.Points(4)}
			if k == 1 {
				line.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
			}
			p.Add(line)
			l.add(sideLabel(r)+": "+name, line)
		}
	}
}

// tjMax adds TjMax as a horizontal line across the longest run.
func tjMax(p *plot.Plot, l *legend, tl *timeline.Timeline, _ sides) {
	longest := 0.0
	var tj *float64
	for _, r := range tl.Runs {
		longest = max(longest, r.Seconds)
		if tj == nil {
			tj = r.TjMaxC
		}
	}
	if tj == nil {
		return
	}
	line, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: *tj}, {X: longest, Y: *tj}})
	line.Color = color.RGBA{0xC0, 0x00, 0x00, 0xff}
	line.Dashes = []vg.Length{vg.Points(2), vg.Points(3)}
	p.Add(line)
	l.add(fmt.Sprintf("TjMax %g °C", *tj), line)
}

// runTimes draws each measured run's wall time (warm-ups and runs cut
// short left out) by its order within its side, and each side's median.
func runTimes(tl *timeline.Timeline, sd sides) chart {
	p := newPlot("Wall time per run", "run of the side, in order", "wall time (s)")
	l := newLegend()
	per := make([]plotter.XYs, len(sd))
	for _, r := range tl.Runs {
		if r.Ended && !r.Warmup {
			i := sd.index(r)
			per[i] = append(per[i], plotter.XY{X: float64(len(per[i]) + 1), Y: r.Seconds})
		}
	}
	any, top, most := false, 0.0, 0
	for i, xys := range per {
		if len(xys) == 0 {
			continue
		}
		any, most = true, max(most, len(xys))
		for _, xy := range xys {
			top = max(top, xy.Y)
		}
		col := sideColors[i%len(sideColors)]
		sc, _ := plotter.NewScatter(xys)
		sc.Color = col
		sc.Shape = glyphs[i%len(glyphs)]
		sc.Radius = vg.Points(4)
		med := median(xys)
		line, _ := plotter.NewLine(plotter.XYs{{X: 0.5, Y: med}, {X: float64(len(xys)) + 0.5, Y: med}})
		line.Color = col
		line.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		p.Add(sc, line)
		l.add(fmt.Sprintf("%s: %d runs", sd[i], len(xys)), sc)
		l.add(fmt.Sprintf("%s: median %.3g s", sd[i], med), line)
	}
	if !any {
		return chart{file: FileRunTimes}
	}
	// Room around the points, so that none sits on an axis.
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, float64(most)+1, 0, top*1.1
	return chart{file: FileRunTimes, plot: p, legend: l}
}

func median(xys plotter.XYs) float64 {
	v := make([]float64, len(xys))
	for i, xy := range xys {
		v[i] = xy.Y
	}
	slices.Sort(v)
	if n := len(v); n%2 == 0 {
		return (v[n/2-1] + v[n/2]) / 2
	}
	return v[len(v)/2]
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Title.TextStyle.Font.Size = vg.Points(14)
	return p
}

// maxLabel is the most characters of a legend entry; longer ones are
// cut.
const maxLabel = 48

// legend is a plot legend that lists each label once.
type legend struct {
	plot.Legend
	seen   map[string]bool
	labels []string
}

func newLegend() *legend { return &legend{Legend: plot.NewLegend(), seen: map[string]bool{}} }

func (l *legend) add(label string, t plot.Thumbnailer) {
	if r := []rune(label); len(r) > maxLabel {
		label = string(r[:maxLabel-1]) + "…"
	}
	if !l.seen[label] {
		l.seen[label] = true
		l.labels = append(l.labels, label)
		l.Add(label, t)
	}
}
