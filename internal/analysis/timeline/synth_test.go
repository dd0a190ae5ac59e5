// SPDX-License-Identifier: Apache-2.0

package timeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/machine/snapshot"
	"github.com/hwpprobe/hwpprobe/internal/synth"
)

// spec is a synthetic recording: internal/synth's figures, with
// MSR_CORE_PERF_LIMIT_REASONS bits and per-CPU IA32_HWP_STATUS set in
// some samples, a spike of package power, a before snapshot and extra
// trace events.
type spec struct {
	cpus, seconds int
	snapshot      *snapshot.Snapshot
	trace         []recording.TraceEvent // written after the first second's batch
	noEnd         bool                   // stop before the run's end (a crash)
	synthWrites   int                    // synth's kernel writes a second
	side          *recording.Side        // an experiment's side: its one run is of it
}

// spikeW is the package power of one sample of every synthetic run.
const spikeW = 999.5

func writeSpec(t *testing.T, path string, sp spec) {
	t.Helper()
	var buf bytes.Buffer
	c := synth.Config{CPUs: sp.cpus, Hz: 10, Seconds: sp.seconds, Seed: 7, TracePerSecond: sp.synthWrites}
	m := synth.Meta(c)
	g := synth.New(c)
	start := g.RunStart()
	if sp.side != nil {
		m.Kind, m.Sides, start.Side = "diff", []recording.Side{*sp.side}, sp.side.Label
	}
	w, err := recording.NewWriter(&buf, m)
	if err != nil {
		t.Fatal(err)
	}
	recs := []recording.Record{start}
	if sp.snapshot != nil {
		data, err := json.Marshal(sp.snapshot)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, recording.Snapshot{Run: 1, Phase: recording.PhaseBefore, TimeNs: synth.Start, Format: "hwpprobe-snapshot-json", Data: data})
	}
	n := 0
	for s := range sp.seconds {
		b := g.Batch()
		for k := range b.Samples {
			mutate(&b.Samples[k], n)
			n++
		}
		recs = append(recs, b, g.Trace(s))
		if s == 0 && len(sp.trace) > 0 {
			recs = append(recs, recording.Trace{Run: 1, Events: sp.trace, Lost: 2})
		}
	}
	if !sp.noEnd {
		end := synth.Start + int64(sp.seconds)*1e9
		recs = append(recs, recording.RunEnd{Run: 1, TimeNs: end})
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if !sp.noEnd {
		if err := w.Close(recording.End{TimeNs: synth.Start + int64(sp.seconds)*1e9, Status: recording.StatusComplete}); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// mutate sets limit reasons (bit 10 from sample 100 to 179, bit 0 every
// 37th sample), HWP_STATUS's excursion bit on even CPUs from sample 50 to
// 89, and the power spike at sample 123.
func mutate(s *recording.Sample, n int) {
	for p := range s.Packages {
		row := &s.Packages[p]
		for r := range row.Regs {
			if row.Regs[r].MSR != hwp.MSR_CORE_PERF_LIMIT_REASONS {
				continue
			}
			if n >= 100 && n < 180 {
				row.Regs[r].Value |= 1 << 10
			}
			if n%37 == 0 {
				row.Regs[r].Value |= 1
			}
		}
		if n == 123 && p == 0 {
			row.Values[0] = spikeW
		}
	}
	for k := range s.CPUs {
		st := uint64(0)
		if n >= 50 && n < 90 && k%2 == 0 {
			st = 1 << 2
		}
		s.CPUs[k].Regs = append(s.CPUs[k].Regs, recording.Reg{MSR: hwp.MSR_IA32_HWP_STATUS, Value: st})
	}
}

func build(t *testing.T, path string, o Options) *Timeline {
	t.Helper()
	tl, err := Build([]string{path}, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := json.Marshal(tl); err != nil {
		t.Fatalf("timeline is not JSON: %v", err)
	}
	return tl
}

// brute is one bucket computed from every sample at once.
type brute struct {
	min, max, sum float64
	n             int
}

// bruteSeries buckets every series of a run read whole at the width a
// single pass would end with: the sampling interval doubled until every
// sample falls within limit buckets.
func bruteSeries(t *testing.T, path string, limit int) (int64, map[seriesKey]map[int]*brute) {
	t.Helper()
	rec, err := recording.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	run := rec.Runs[0]
	start := run.Start.TimeNs
	w := rec.Meta.IntervalNs
	for _, s := range run.Samples {
		for max(s.TimeNs-start, 0)/w >= int64(limit) {
			w *= 2
		}
	}
	out := map[seriesKey]map[int]*brute{}
	put := func(fig, group string, i int, v float64) {
		k := seriesKey{fig, group}
		if out[k] == nil {
			out[k] = map[int]*brute{}
		}
		b := out[k][i]
		if b == nil {
			b = &brute{min: v, max: v}
			out[k][i] = b
		}
		b.min, b.max, b.sum, b.n = math.Min(b.min, v), math.Max(b.max, v), b.sum+v, b.n+1
	}
	for _, s := range run.Samples {
		i := int(max(s.TimeNs-start, 0) / w)
		for _, f := range cpuFigures {
			for _, row := range s.Summaries {
				if v := row.Value(run.Column(f)); v.Valid() {
					put(f, row.Type, i, float64(v))
				}
			}
		}
		for _, f := range perCPUFigures {
			for _, row := range s.CPUs {
				if v := row.Value(run.Column(f)); v.Valid() {
					put(f, "cpu"+strconv.Itoa(row.CPU), i, float64(v))
				}
			}
		}
		for _, f := range pkgFigures {
			var vals []float64
			for _, p := range s.Packages {
				if v := p.Value(run.PackageColumn(f)); v.Valid() {
					vals = append(vals, float64(v))
				}
			}
			if len(vals) == 0 {
				continue
			}
			v := vals[0]
			for _, x := range vals[1:] {
				if f == "PkgTmp" {
					v = math.Max(v, x)
				} else {
					v += x
				}
			}
			put(f, "package", i, v)
		}
	}
	return w, out
}

// TestDecimationMatchesBruteForce builds timelines of a 14-CPU and a
// 300-CPU recording with few and with many buckets, and checks every
// series against the buckets computed from all the samples at once: the
// same bucket width, the true minimum and maximum, the same counts, and
// means within rounding.
func TestDecimationMatchesBruteForce(t *testing.T) {
	for _, tc := range []struct {
		name            string
		cpus, seconds   int
		limit           int
		wantMaxPerPoint int
	}{
		{"14 CPUs, 40 s into 16 buckets", 14, 40, 16, 32},
		{"14 CPUs, 40 s into 1000 buckets (no decimation)", 14, 40, 1000, 2},
		{"300 CPUs, 20 s into 50 buckets", 300, 20, 50, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "synth.hwpr")
			writeSpec(t, path, spec{cpus: tc.cpus, seconds: tc.seconds})
			tl := build(t, path, Options{MaxPoints: tc.limit, PerCPU: true})
			w, want := bruteSeries(t, path, tc.limit)
			run := tl.Runs[0]
			if got := int64(math.Round(run.BucketSeconds * 1e9)); got != w {
				t.Fatalf("bucket width %d ns, brute force %d ns", got, w)
			}
			if len(run.Series) != len(want) {
				t.Errorf("%d series, brute force %d", len(run.Series), len(want))
			}
			spike := false
			for _, s := range run.Series {
				checkSeries(t, s, want[seriesKey{s.Figure, s.Group}], w, tc.limit)
				spike = spike || s.Figure == "PkgWatt" && slicesMax(s.Max) >= spikeW
				if n := slicesMax(intsToFloats(s.N)); n > float64(tc.wantMaxPerPoint) {
					t.Errorf("%s %s: a bucket of %v samples", s.Figure, s.Group, n)
				}
			}
			if !spike {
				t.Errorf("the %v W spike is lost", spikeW)
			}
		})
	}
}

func checkSeries(t *testing.T, s Series, want map[int]*brute, w int64, limit int) {
	t.Helper()
	if len(s.T) != len(want) || len(s.T) > limit {
		t.Errorf("%s %s: %d points, brute force %d (limit %d)", s.Figure, s.Group, len(s.T), len(want), limit)
		return
	}
	for j, tt := range s.T {
		i := int(math.Round(tt * 1e9 / float64(w)))
		b := want[i]
		switch {
		case b == nil:
			t.Errorf("%s %s: point at %v s, brute force has none", s.Figure, s.Group, tt)
		case s.Min[j] != b.min || s.Max[j] != b.max || s.N[j] != b.n:
			t.Errorf("%s %s at %v s: min %v max %v n %d, brute force %v %v %d", s.Figure, s.Group, tt, s.Min[j], s.Max[j], s.N[j], b.min, b.max, b.n)
		case math.Abs(s.Mean[j]-b.sum/float64(b.n)) > 1e-4*max(1, math.Abs(s.Mean[j])):
			t.Errorf("%s %s at %v s: mean %v, brute force %v", s.Figure, s.Group, tt, s.Mean[j], b.sum/float64(b.n))
		}
	}
}

func slicesMax(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}

func intsToFloats(v []int) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// TestBands checks the limit reason and excursion bands of the synthetic
// run at full resolution: bit 10 from sample 100 to 179 (10.1 s to
// 18.0 s, bands cover whole sampling intervals), bit 0 in every 37th
// sample alone, excursions on half the CPUs from sample 50 to 89.
func TestBands(t *testing.T) {
	path := filepath.Join(t.TempDir(), "synth.hwpr")
	writeSpec(t, path, spec{cpus: 14, seconds: 30})
	run := build(t, path, Options{}).Runs[0]
	var bit10, bit0 []Band
	for _, b := range run.LimitReasons {
		switch b.Name {
		case "bit10":
			bit10 = append(bit10, b)
		case "bit0":
			bit0 = append(bit0, b)
		default:
			t.Errorf("unexpected band %+v", b)
		}
	}
	want10 := []Band{{Name: "bit10", Group: "package", From: 10.1, To: 18.1, Share: 1}}
	if diff := cmp.Diff(want10, bit10, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("bit10 bands (-want +got):\n%s", diff)
	}
	if len(bit0) != 300/37+1 {
		t.Errorf("%d bit0 bands, want one per 37 samples: %+v", len(bit0), bit0)
	}
	wantExc := []Band{{Name: "excursion_to_minimum", Group: "E", From: 5.1, To: 9.1, Share: 0.5},
		{Name: "excursion_to_minimum", Group: "LP-E", From: 5.1, To: 9.1, Share: 0.5},
		{Name: "excursion_to_minimum", Group: "P", From: 5.1, To: 9.1, Share: 0.5}}
	slices.SortFunc(run.Excursions, func(a, b Band) int { return strings.Compare(a.Group, b.Group) })
	if diff := cmp.Diff(wantExc, run.Excursions, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("excursion bands (-want +got):\n%s", diff)
	}
}

// TestTruncated cuts a recording at several points: what is before the
// cut is a timeline with a note of what is missing; a cut before the
// first run, an empty file and text are errors wrapping ErrUnreadable.
func TestTruncated(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, "full.hwpr")
	writeSpec(t, full, spec{cpus: 14, seconds: 20})
	b, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{len(b) / 2, len(b) - 3, len(b) * 9 / 10} {
		p := filepath.Join(dir, "cut.hwpr")
		if err := os.WriteFile(p, b[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		tl := build(t, p, Options{})
		if len(tl.Runs) != 1 || len(tl.Missing) == 0 || tl.Sources[0].Complete {
			t.Fatalf("cut at %d of %d: %d runs, missing %q", cut, len(b), len(tl.Runs), tl.Missing)
		}
		if !strings.Contains(tl.Missing[0], "truncated") {
			t.Errorf("cut at %d: missing %q does not say truncated", cut, tl.Missing)
		}
		run := tl.Runs[0]
		if len(run.Series) == 0 || len(run.Series[0].T) == 0 {
			t.Errorf("cut at %d: no points", cut)
		}
		if cut == len(b)/2 && (run.Ended || !strings.Contains(strings.Join(tl.Missing, "\n"), "no run-end record")) {
			t.Errorf("cut at %d: ended %v, missing %q", cut, run.Ended, tl.Missing)
		}
	}
	noEnd := filepath.Join(dir, "noend.hwpr")
	writeSpec(t, noEnd, spec{cpus: 14, seconds: 5, noEnd: true})
	tl := build(t, noEnd, Options{})
	if got := strings.Join(tl.Missing, "\n"); !strings.Contains(got, "no end record") || !strings.Contains(got, "run 1: no run-end record") {
		t.Errorf("missing %q", got)
	}
	if r := tl.Runs[0]; r.Seconds != 5 {
		t.Errorf("run of a file without its end lasts %v s, want 5 (to its last sample)", r.Seconds)
	}
	for name, data := range map[string][]byte{"empty": nil, "header only": b[:12], "text": []byte("hello\n"), "cut in meta": b[:30]} {
		p := filepath.Join(dir, "bad")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if tl, err := Build([]string{p}, Options{}); !errors.Is(err, ErrUnreadable) || tl != nil {
			t.Errorf("%s: %v, want an error wrapping ErrUnreadable", name, err)
		}
	}
	if _, err := Build([]string{filepath.Join(dir, "absent")}, Options{}); !errors.Is(err, ErrUnreadable) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("absent file: %v", err)
	}
	if _, err := Build(nil, Options{}); !errors.Is(err, ErrUnreadable) {
		t.Errorf("no file: %v", err)
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestSides: the runs of plain recordings given together are sides A
// and B, named after their files, in the order given; an experiment's
// runs keep their side, with its settings as the profile.
func TestSides(t *testing.T) {
	dir := t.TempDir()
	a, b, x := filepath.Join(dir, "a.hwpr"), filepath.Join(dir, "b.hwpr"), filepath.Join(dir, "x.hwpr")
	writeSpec(t, a, spec{cpus: 4, seconds: 2})
	writeSpec(t, b, spec{cpus: 4, seconds: 3})
	writeSpec(t, x, spec{cpus: 4, seconds: 1, side: &recording.Side{Label: "B",
		Settings: []recording.Setting{{Name: "governor", Value: "powersave"}, {Name: "epp", Value: "performance"}}}})
	tl, err := Build([]string{a, b}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	exp, err := Build([]string{x}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range append(tl.Runs, exp.Runs...) {
		got = append(got, fmt.Sprintf("%s|%s|%s|%g", r.Side, r.Profile, r.Source, r.Seconds))
	}
	want := []string{"A (a.hwpr)||a.hwpr|2", "B (b.hwpr)||b.hwpr|3", "B|governor=powersave, epp=performance|x.hwpr|1"}
	if diff := cmp.Diff(want, got); diff != "" || len(tl.Sources) != 2 || !tl.Sources[1].Complete {
		t.Errorf("runs (-want +got):\n%s\nsources %+v", diff, tl.Sources)
	}
}

// TestDamagedAnywhere cuts a recording at 200 points and flips a byte at
// 200 others: every file gives a timeline with what is missing said, or
// an error wrapping ErrUnreadable, and never panics.
func TestDamagedAnywhere(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, "full.hwpr")
	writeSpec(t, full, spec{cpus: 6, seconds: 4, synthWrites: 5})
	b, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "damaged.hwpr")
	for k := range 400 {
		d := slices.Clone(b)
		at := (k % 200) * len(b) / 200
		if k < 200 {
			d = d[:at]
		} else {
			d[at] ^= 0x5a
		}
		if err := os.WriteFile(p, d, 0o644); err != nil {
			t.Fatal(err)
		}
		tl, err := Build([]string{p}, Options{MaxPoints: 8, PerCPU: true})
		switch {
		case err != nil && !errors.Is(err, ErrUnreadable):
			t.Errorf("damage %d at %d: %v", k, at, err)
		case err == nil && (len(tl.Missing) == 0 || tl.Sources[0].Complete):
			t.Errorf("damage %d at %d: a timeline without a word of what is missing", k, at)
		}
	}
}
