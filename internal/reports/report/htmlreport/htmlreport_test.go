// SPDX-License-Identifier: Apache-2.0

package htmlreport

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/analysis/timeline"
)

// nan compares NaN as equal (gaps).
var nan = cmp.Comparer(func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) })

func TestAlign(t *testing.T) {
	tests := []struct {
		name   string
		tracks []track
		wantX  Numbers
		want   []Numbers
	}{
		{"buckets with gaps", []track{
			{t: []float64{0, 1, 2}, v: []float64{10, 11, 12}},
			{t: []float64{1, 3}, v: []float64{21, 23}},
		}, Numbers{0, 1, 2, 3}, []Numbers{{10, 11, 12, NaN}, {NaN, 21, NaN, 23}}},
		{"steps hold until the run's end", []track{
			{t: []float64{0, 2}, v: []float64{1, 2}},
			{t: []float64{1}, v: []float64{5}, hold: true, until: 3},
		}, Numbers{0, 1, 2, 3}, []Numbers{{1, NaN, 2, NaN}, {NaN, 5, 5, 5}}},
		{"steps before and after", []track{
			{t: []float64{-0.5, 1}, v: []float64{4, 6}, hold: true, until: 2},
			{t: []float64{0, 1.5}, v: []float64{7, 8}},
		}, Numbers{-0.5, 0, 1, 1.5, 2}, []Numbers{{4, 4, 6, 6, 6}, {NaN, 7, NaN, 8, NaN}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Chart
			align(&c, tt.tracks)
			var got []Numbers
			for _, s := range c.Series {
				got = append(got, s.Values)
			}
			if diff := cmp.Diff(tt.wantX, c.X, nan); diff != "" {
				t.Errorf("x (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got, nan); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNumbersJSON(t *testing.T) {
	b, err := json.Marshal(struct {
		V Numbers `json:"v"`
		N Number  `json:"n"`
	}{Numbers{1, NaN, math.Inf(1), 4294.3712, 0.000123456789}, Number(NaN)})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"v":[1,null,null,4294.37,0.000123457],"n":null}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}

// TestDiffColumns: each side's timeline is its median counted run.
func TestDiffColumns(t *testing.T) {
	res := &analysis.Result{Sides: []analysis.SideResult{{Label: "A"}, {Label: "B"}}}
	for i, s := range []float64{5, 3, 9, 4} { // A: runs 1-4
		res.Runs = append(res.Runs, analysis.RunResult{Side: "A", Run: i + 1, Source: "x", Seconds: s})
	}
	res.Runs = append(res.Runs,
		analysis.RunResult{Side: "B", Run: 5, Source: "x", Seconds: 2},
		analysis.RunResult{Side: "B", Run: 6, Source: "x", Seconds: 1, Excluded: "warm-up", Warmup: true},
		analysis.RunResult{Side: "B", Run: 7, Source: "x", Seconds: 8})
	tl := &timeline.Timeline{}
	for r := 1; r <= 7; r++ {
		tl.Runs = append(tl.Runs, timeline.Run{Source: "x", Run: r})
	}
	var got []int
	for _, c := range diffColumns(res, tl) {
		got = append(got, c.Run.Run)
	}
	// A: 3 4 5 9 -> the lower middle, 4 s (run 4); B: 2 8 -> run 5.
	if diff := cmp.Diff([]int{4, 5}, got); diff != "" {
		t.Errorf("runs drawn (-want +got):\n%s", diff)
	}
}

// TestShareY: the columns of a row share one value scale; lanes and
// empty charts keep theirs.
func TestShareY(t *testing.T) {
	row := []Chart{
		{Series: []Series{{Values: Numbers{10, 20}}}},
		{Series: []Series{{Values: Numbers{NaN, 50}}}, HLines: []HLine{{Value: 100}}},
		{Lanes: []string{"x"}, Series: []Series{{Values: Numbers{1}}}},
		{EmptyText: "nothing"},
	}
	for i := range row {
		row[i].YMin, row[i].YMax = Number(NaN), Number(NaN)
	}
	shareY(row)
	for i, c := range row[:2] {
		if c.YMin != 0 || c.YMax != 104.5 {
			t.Errorf("chart %d: y %v..%v, want 0..104.5", i, c.YMin, c.YMax)
		}
	}
	for i, c := range row[2:] {
		if !math.IsNaN(float64(c.YMin)) {
			t.Errorf("chart %d got a shared scale: %v", i+2, c.YMin)
		}
	}
}

func TestWriteText(t *testing.T) {
	w := timeline.Write{T: 1.5, CPU: 3, CoreType: "P", Register: "IA32_HWP_REQUEST", Old: "0x40003e05", New: "0xff003e05",
		Fields: []timeline.Field{{Name: "min", Old: 5, New: 5}, {Name: "epp", Old: 64, New: 255, Changed: true}}, Comm: "sh", PID: 25, Emulated: true}
	if got, want := writeText(w), "+1.500 s CPU 3 (P): 0x40003e05 -> 0xff003e05: epp 64 -> 255 by sh[25] (emulated)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestWrittenText(t *testing.T) {
	var ws []analysis.Writer
	for i := range 6 {
		ws = append(ws, analysis.Writer{Comm: fmt.Sprintf("kworker/%d:1", i), Writes: 10 - i,
			Fields: analysis.Fields{"epp": {{Value: 128, Count: 10 - i}}}})
	}
	ws = append(ws, analysis.Writer{Comm: "x", Writes: 1, Fields: analysis.Fields{"epb": {{Value: 6, Count: 1}}}})
	want := "kworker/0:1 x10: 128; kworker/1:1 x9: 128; kworker/2:1 x8: 128; kworker/3:1 x7: 128; and 2 more writers (11 writes)"
	if got := writtenText(ws, "epp"); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := writtenText(ws, "min"); got != "-" {
		t.Errorf("no writer of min: got %q", got)
	}
}

// TestWritesChart: a point per write in its register's lane, hover text,
// and the note when the timeline kept only the first writes.
func TestWritesChart(t *testing.T) {
	run := &timeline.Run{Writes: []timeline.Write{
		{T: 1.5, CPU: 1, Register: "IA32_ENERGY_PERF_BIAS", New: "0x6", Comm: "x", PID: 2},
		{T: -0.25, CPU: 0, Register: "IA32_HWP_REQUEST", New: "0x1", Comm: "x", PID: 2},
	}, WritesDropped: 3}
	c := newChart("w", "", "")
	writesChart([]string{"IA32_HWP_REQUEST", "IA32_ENERGY_PERF_BIAS"})(&c, column{Run: run})
	if diff := cmp.Diff(Numbers{-0.25, 1.5}, c.X); diff != "" {
		t.Errorf("x (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Numbers{{1, NaN}, {NaN, 2}}, []Numbers{c.Series[0].Values, c.Series[1].Values}, nan); diff != "" {
		t.Errorf("lanes (-want +got):\n%s", diff)
	}
	if c.Series[1].Text[1] != "+1.500 s CPU 1: ? -> 0x6 by x[2]" {
		t.Errorf("hover text %q", c.Series[1].Text[1])
	}
	if want := "; the first 2 writes drawn (to +1.5 s), 3 more not kept"; c.Note != want {
		t.Errorf("note %q, want %q", c.Note, want)
	}
}
