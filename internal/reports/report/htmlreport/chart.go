// SPDX-License-Identifier: Apache-2.0

package htmlreport

import (
	"math"
	"strconv"
)

// Chart describes one uPlot chart of the page; assets/page.js draws it.
// Every series shares X; a value that is NaN is a gap (JSON null).
type Chart struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Note    string `json:"-"` // shown under the title
	Section string `json:"-"` // the page section it belongs to
	// Group names the charts whose x zoom moves together (the
	// timelines); "" for a chart on its own.
	Group  string   `json:"group"`
	XLabel string   `json:"xLabel"`
	XUnit  string   `json:"xUnit,omitempty"`
	YLabel string   `json:"yLabel"`
	YUnit  string   `json:"yUnit,omitempty"`
	X      Numbers  `json:"x"`
	Series []Series `json:"series"`
	// Bands fill between two series (indices into Series).
	Bands []Band `json:"bands,omitempty"`
	// HLines are horizontal lines (PL1, TjMax, a median); HSpans are
	// horizontal spans (an interval).
	HLines []HLine `json:"hlines,omitempty"`
	HSpans []HSpan `json:"hspans,omitempty"`
	// Lanes names the y values 1..n of a chart of lanes (limit reasons,
	// register writes).
	Lanes []string `json:"lanes,omitempty"`
	// XMin..YMax fix the ranges (sides drawn on one scale); NaN: fit.
	XMin   Number `json:"xMin"`
	XMax   Number `json:"xMax"`
	YMin   Number `json:"yMin"`
	YMax   Number `json:"yMax"`
	Height int    `json:"height,omitempty"`
	// ZeroBased: a shared value scale (shareY) starts at 0 (frequency,
	// busy, power); temperatures start near their lowest.
	ZeroBased bool `json:"-"`
	// EmptyText says why the chart has nothing to draw (a run without
	// register writes); page.js writes it in the plot area, and the
	// self-check expects no drawing.
	EmptyText string `json:"emptyText,omitempty"`
	// XWhole: the x values are whole numbers (run order); ticks only at
	// them.
	XWhole bool `json:"xWhole,omitempty"`
}

// Series kinds.
const (
	KindLine   = "line"
	KindStep   = "step"   // steps: a value holds until the next
	KindPoints = "points" // points, no line
	KindLane   = "lane"   // a thick step line at its lane's y where active
)

// Series is one line, set of points or lane of a chart.
type Series struct {
	Label  string  `json:"label"`
	Color  string  `json:"color"`
	Kind   string  `json:"kind"`
	Values Numbers `json:"values"`
	Width  float64 `json:"width,omitempty"`
	Dash   bool    `json:"dash,omitempty"`
	Size   float64 `json:"size,omitempty"` // points
	// Text is what hovering over each point shows instead of its value
	// (a register write's decoded fields and writer).
	Text   []string `json:"text,omitempty"`
	Hidden bool     `json:"hidden,omitempty"`
	// Aux: a helper line (a band's minimum or maximum) left out of the
	// legend.
	Aux bool `json:"aux,omitempty"`
}

// Band fills between series Hi and Lo.
type Band struct {
	Hi    int    `json:"hi"`
	Lo    int    `json:"lo"`
	Color string `json:"color"`
}

// HLine is a labelled horizontal line.
type HLine struct {
	Label string  `json:"label"`
	Value float64 `json:"value"`
	Color string  `json:"color"`
	Dash  bool    `json:"dash,omitempty"`
}

// HSpan is a shaded horizontal span.
type HSpan struct {
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	Color string  `json:"color"`
}

// Number is a float that is JSON null when not finite.
type Number float64

// MarshalJSON writes the number with at most 6 significant digits, or
// null.
func (n Number) MarshalJSON() ([]byte, error) { return appendNum(nil, float64(n)), nil }

// Numbers is a series of values; NaN and infinities are JSON nulls.
type Numbers []float64

// MarshalJSON writes the values compactly (6 significant digits).
func (v Numbers) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 8*len(v)+2)
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendNum(b, x)
	}
	return append(b, ']'), nil
}

func appendNum(b []byte, x float64) []byte {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, x, 'g', 6, 64)
}

// NaN is the value of a gap.
var NaN = math.NaN()

// palette: saturated colours readable on light and dark backgrounds (the
// page's self-check counts coloured pixels; greys are the grid's).
var palette = []string{"#1f77d0", "#e8710a", "#1a9e5a", "#b03ad0", "#d62f5a", "#0f9fb0", "#9a7b00", "#6b5bd6"}

// Side colours: A, B, ... (up to 8 sides).
var sideColors = []string{"#1f77d0", "#e8710a", "#2a9d3f", "#8e44ad", "#c0392b", "#16a5a5", "#b8860b", "#555555"}

// sideColor is side i's colour.
func sideColor(i int) string { return sideColors[i%len(sideColors)] }

// coreTypeColor gives each core type its colour on every chart.
func coreTypeColor(t string) string {
	switch t {
	case "P":
		return "#1f77d0"
	case "E":
		return "#1a9e5a"
	case "LP-E", "LPE":
		return "#b03ad0"
	case "all":
		return "#e8710a"
	}
	h := 0
	for _, c := range t {
		h = h*31 + int(c)
	}
	return palette[(h%len(palette)+len(palette))%len(palette)]
}
