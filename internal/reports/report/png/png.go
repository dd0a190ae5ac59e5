// SPDX-License-Identifier: Apache-2.0

// Package png renders the main charts of a timeline (package
// analysis/timeline) as PNG files, for bug trackers that take no HTML:
// delivered MHz and Busy% per core type, package power with PL1 and PL2,
// temperatures with TjMax, and each run's wall time per side. Charts are
// drawn with gonum.org/v1/plot; every run but warm-ups is drawn from its
// start, the sides in distinct colours, the core types in distinct
// dashes, each bucket's mean as a line over a light band from its
// minimum to its maximum.
//
// Write writes one file per chart into a directory, each atomically
// (internal/files/atomicfile): a file is either the whole chart or absent.
// The files, which Write leaves out when the timeline has nothing for
// them (a machine without RAPL has no power chart):
//
//	mhz.png          Avg_MHz per core type ("all" when not hybrid)
//	busy.png         Busy% per core type
//	power.png        PkgWatt, CorWatt, RAMWatt with PL1 and PL2
//	temperature.png  PkgTmp, CoreTmp per core type, TjMax
//	run-times.png    each run's wall time by side, with the sides' medians
package png

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/hwpprobe/hwpprobe/internal/analysis/timeline"
	"github.com/hwpprobe/hwpprobe/internal/files/atomicfile"
)

// The files Write writes.
const (
	FileMHz         = "mhz.png"
	FileBusy        = "busy.png"
	FilePower       = "power.png"
	FileTemperature = "temperature.png"
	FileRunTimes    = "run-times.png"
)

// Default image size in pixels.
const (
	DefaultWidth  = 1200
	DefaultHeight = 600
)

// dpi is the resolution the charts are drawn at: 96 pixels an inch.
const dpi = 96

// ErrNoRuns is wrapped by Write's error for a timeline without runs.
var ErrNoRuns = errors.New("the timeline has no runs to plot")

// Options size the images; zero values take the defaults.
type Options struct {
	Width, Height int // pixels, each at least 300
}

// Chart is one file written.
type Chart struct {
	Path  string `json:"path"`
	Title string `json:"title"`
	// PlotArea is the data area inside the axes, in pixels from the
	// image's top left corner.
	PlotArea image.Rectangle `json:"plot_area"`
}

// Write renders tl's charts into dir (created when absent; files of the
// same names are replaced) and returns the charts written, in the order
// of the package documentation.
func Write(dir string, tl *timeline.Timeline, o Options) ([]Chart, error) {
	if tl == nil || len(tl.Runs) == 0 {
		return nil, ErrNoRuns
	}
	w, h := o.Width, o.Height
	if w == 0 {
		w = DefaultWidth
	}
	if h == 0 {
		h = DefaultHeight
	}
	if w < 300 || h < 300 || w > 10000 || h > 10000 {
		return nil, fmt.Errorf("image size %dx%d: each side must be 300 to 10000 pixels", w, h)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var out []Chart
	for _, c := range charts(tl) {
		if c.plot == nil {
			continue
		}
		area, err := save(filepath.Join(dir, c.file), c, w, h)
		if err != nil {
			return out, err
		}
		out = append(out, Chart{Path: filepath.Join(dir, c.file), Title: c.plot.Title.Text, PlotArea: area})
	}
	return out, nil
}

// chart is a plot and its legend, before drawing.
type chart struct {
	file   string
	plot   *plot.Plot
	legend *legend
}

// save draws c at w x h pixels, the legend right of the plot, into path
// atomically, and returns the data area in pixels.
func save(path string, c chart, w, h int) (image.Rectangle, error) {
	width, height := vg.Length(w)*vg.Inch/dpi, vg.Length(h)*vg.Inch/dpi
	canvas := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(color.White))
	dc := draw.New(canvas)
	legendW := min(legendWidth(c.legend), width/2)
	plotArea := draw.Crop(dc, 0, -legendW, 0, 0)
	c.plot.Draw(plotArea)
	c.legend.Top, c.legend.Left = true, true
	c.legend.Draw(draw.Crop(dc, width-legendW+vg.Points(8), 0, 0, -vg.Points(8)))
	da := c.plot.DataCanvas(plotArea).Rectangle
	px := func(l vg.Length) int { return int(l / vg.Inch * dpi) }
	area := image.Rect(px(da.Min.X), h-px(da.Max.Y), px(da.Max.X), h-px(da.Min.Y))
	f, err := atomicfile.Create(path, atomicfile.Options{Replace: true})
	if err != nil {
		return area, err
	}
	if _, err := (vgimg.PngCanvas{Canvas: canvas}).WriteTo(f); err != nil {
		f.Abort()
		return area, fmt.Errorf("%s: %w", path, err)
	}
	return area, f.Commit()
}

// legendWidth is the width l's widest entry needs, with a margin.
func legendWidth(l *legend) vg.Length {
	var w vg.Length
	for _, e := range l.labels {
		w = max(w, l.TextStyle.Width(e))
	}
	return w + l.ThumbnailWidth + l.TextStyle.Width("  ") + vg.Points(28)
}
