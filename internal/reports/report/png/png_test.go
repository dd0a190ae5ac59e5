// SPDX-License-Identifier: Apache-2.0

package png

import (
	"cmp"
	"errors"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hwpprobe/hwpprobe/internal/analysis/timeline"
	"github.com/hwpprobe/hwpprobe/internal/synth"
)

// series returns n buckets of 0.5 s of a figure that rises with slope,
// with a spike in the middle bucket's maximum.
func series(figure, group, unit string, n int, base, slope float64) timeline.Series {
	s := timeline.Series{Figure: figure, Group: group, Unit: unit}
	for i := range n {
		v := base + slope*float64(i) + 5*math.Sin(float64(i)/3)
		hi := v + 2
		if i == n/2 {
			hi = v * 1.5
		}
		s.T, s.Min, s.Max, s.Mean, s.N = append(s.T, float64(i)*0.5), append(s.Min, v-2), append(s.Max, hi), append(s.Mean, v), append(s.N, 5)
	}
	return s
}

func f(v float64) *float64 { return &v }

// experiment is a two-sided timeline of a hybrid machine: three runs a
// side, the second side slower, hotter and at PL1 sooner.
func experiment() *timeline.Timeline {
	tl := &timeline.Timeline{MaxPoints: 2000}
	for k, side := range []string{"performance", "powersave:epp=performance"} {
		for run := range 3 {
			n := 40 + 4*k + run
			r := timeline.Run{Source: "diff.hwpr", Run: 2*run + k + 1, Side: side, Seconds: float64(n) / 2, Ended: true, BucketSeconds: 0.5,
				TjMaxC: f(110), PowerLimits: []timeline.PowerLimit{{T: 0, PL1W: f(15), PL2W: f(57), Source: "snapshot"}, {T: 8, PL1W: f(10), PL2W: f(57), Source: "write"}}}
			for i, typ := range []string{"P", "E", "LP-E", "all"} {
				r.Series = append(r.Series,
					series("Avg_MHz", typ, "MHz", n, 4000-800*float64(i), -20*float64(k+1)),
					series("Busy%", typ, "%", n, 80-10*float64(i)+10*float64(k), 0.1),
					series("CoreTmp", typ, "°C", n, 60+float64(k)*10, 0.3))
			}
			r.Series = append(r.Series, series("PkgWatt", "package", "W", n, 50+5*float64(k), -1), series("CorWatt", "package", "W", n, 40+5*float64(k), -1),
				series("PkgTmp", "package", "°C", n, 65+float64(k)*10, 0.3))
			tl.Runs = append(tl.Runs, r)
		}
	}
	// A warm-up run of a third side: left out of every chart.
	w := tl.Runs[0]
	w.Side, w.Warmup = "warm-up side", true
	tl.Runs = append(tl.Runs, w)
	return tl
}

var allFiles = []string{FileMHz, FileBusy, FilePower, FileTemperature, FileRunTimes}

// TestWrite renders an experiment's charts and checks each file: a PNG of
// the size asked, every chart's plot area drawn on (non-white pixels
// inside the axes), both sides' colours in it, and nothing else left in
// the directory. Written twice, the files are replaced.
func TestWrite(t *testing.T) {
	for _, o := range []Options{{}, {Width: 800, Height: 400}} {
		dir := t.TempDir()
		if d := os.Getenv("HWPPROBE_PNG_DIR"); d != "" {
			dir = d
		}
		for range 2 {
			charts, err := Write(dir, experiment(), o)
			if err != nil {
				t.Fatal(err)
			}
			checkCharts(t, dir, charts, allFiles, o, 2)
		}
	}
}

func checkCharts(t *testing.T, dir string, charts []Chart, want []string, o Options, sides int) {
	t.Helper()
	w, h := cmp.Or(o.Width, DefaultWidth), cmp.Or(o.Height, DefaultHeight)
	var names []string
	for _, c := range charts {
		names = append(names, filepath.Base(c.Path))
		img := decode(t, c.Path)
		if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
			t.Errorf("%s: %v, want %dx%d", c.Path, b, w, h)
		}
		area := c.PlotArea.Inset(3)
		if area.Dx() < w/3 || area.Dy() < h/3 || !area.In(img.Bounds()) {
			t.Errorf("%s: plot area %v in %v", c.Path, c.PlotArea, img.Bounds())
			continue
		}
		drawn, perSide := count(img, area)
		if drawn < area.Dx()*area.Dy()/1000 {
			t.Errorf("%s: %d of %d pixels of the plot area drawn", c.Path, drawn, area.Dx()*area.Dy())
		}
		for i := range sides {
			if perSide[i] < 20 {
				t.Errorf("%s: %d pixels of side %d's colour in the plot area", c.Path, perSide[i], i)
			}
		}
		if perSide[sides] > 0 {
			t.Errorf("%s: %d pixels of the warm-up side's colour in the plot area", c.Path, perSide[sides])
		}
	}
	if !slices.Equal(names, want) {
		t.Errorf("charts %v, want %v", names, want)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
	}
	slices.Sort(files)
	if sorted := slices.Sorted(slices.Values(want)); !slices.Equal(files, sorted) {
		t.Errorf("directory holds %v, want %v", files, sorted)
	}
}

func decode(t *testing.T, path string) image.Image {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	img, err := png.Decode(fh)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}

// count returns the pixels of area that are not white, and those of each
// side's colour.
func count(img image.Image, area image.Rectangle) (int, []int) {
	drawn, perSide := 0, make([]int, len(sideColors))
	for y := area.Min.Y; y < area.Max.Y; y++ {
		for x := area.Min.X; x < area.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			if c.R < 0xf0 || c.G < 0xf0 || c.B < 0xf0 {
				drawn++
			}
			for i, sc := range sideColors {
				if near(c, sc) {
					perSide[i]++
				}
			}
		}
	}
	return drawn, perSide
}

func near(a, b color.RGBA) bool {
	d := func(x, y uint8) int { return max(int(x)-int(y), int(y)-int(x)) }
	return d(a.R, b.R) < 12 && d(a.G, b.G) < 12 && d(a.B, b.B) < 12
}

// TestWriteRecordings renders the timeline of two synthetic recordings
// (sides A and B, no snapshot: no limits, no TjMax) built by package
// timeline.
func TestWriteRecordings(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i := range 2 {
		p := filepath.Join(dir, []string{"a.hwpr", "b.hwpr"}[i])
		fh, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := synth.Write(fh, synth.Config{CPUs: 14, Hz: 10, Seconds: 20 + 5*i, Seed: uint64(i + 1)}); err != nil {
			t.Fatal(err)
		}
		fh.Close()
		paths = append(paths, p)
	}
	tl, err := timeline.Build(paths, timeline.Options{MaxPoints: 100})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "png")
	charts, err := Write(out, tl, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkCharts(t, out, charts, allFiles, Options{}, 2)
}

// TestWriteNothing: charts without data are left out; a timeline without
// runs and a bad size are errors, and write nothing.
func TestWriteNothing(t *testing.T) {
	tl := experiment()
	for i := range tl.Runs {
		tl.Runs[i].Series = slices.DeleteFunc(tl.Runs[i].Series, func(s timeline.Series) bool { return s.Unit == "W" })
	}
	dir := t.TempDir()
	charts, err := Write(dir, tl, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkCharts(t, dir, charts, []string{FileMHz, FileBusy, FileTemperature, FileRunTimes}, Options{}, 2)
	empty := t.TempDir()
	if _, err := Write(empty, &timeline.Timeline{}, Options{}); !errors.Is(err, ErrNoRuns) {
		t.Errorf("no runs: %v", err)
	}
	if _, err := Write(empty, experiment(), Options{Width: 10}); err == nil {
		t.Error("a 10-pixel image was accepted")
	}
	if e, _ := os.ReadDir(empty); len(e) > 0 {
		t.Errorf("files written: %v", e)
	}
}
