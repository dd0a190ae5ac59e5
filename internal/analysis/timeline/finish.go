// SPDX-License-Identifier: Apache-2.0

package timeline

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
)

// finish turns what was gathered into the run's timeline; run is the
// run as recording.Scan filed it (start, end, notes).
func (x *runBuilder) finish(run *recording.Run) Run {
	r := Run{Run: x.start.Run, Side: x.start.Side, Warmup: x.start.Warmup, StartNs: x.start.TimeNs,
		BucketSeconds: float64(x.clk.width) / 1e9, Series: []Series{}, TjMaxC: x.snap.tjMax,
		PowerLimits: x.writes.limits, WritesDropped: x.writes.dropped, WritesLost: run.TraceLost}
	end := x.lastSampleNs
	if run.End != nil {
		r.Ended, r.ExitCode, end = true, run.End.ExitCode, run.End.TimeNs
	}
	r.Seconds = seconds(end - x.start.TimeNs)
	for _, n := range run.Notes {
		r.Notes = append(r.Notes, n.Text)
	}
	r.Series = x.allSeries()
	r.LimitTable, r.LimitReasons = x.limitBands()
	for _, g := range sortedGroups(x.status) {
		if a := x.excursion[g]; a != nil {
			r.Excursions = append(r.Excursions, x.bands("excursion_to_minimum", g, a, x.status[g])...)
		}
	}
	r.Requests = x.requestSteps()
	r.Writes = x.writes.writes(func(cpu int) string {
		if cpu >= 0 && cpu < len(x.cpuType) {
			return x.cpuType[cpu]
		}
		return ""
	})
	return r
}

// allSeries lists the series: per figure (cpuFigures, then pkgFigures),
// per group (core types, "all", "package", then the CPUs).
func (x *runBuilder) allSeries() []Series {
	keys := make([]seriesKey, 0, len(x.series))
	for k := range x.series {
		keys = append(keys, k)
	}
	order := append(slices.Clone(cpuFigures), pkgFigures...)
	slices.SortFunc(keys, func(a, b seriesKey) int {
		return cmp.Or(cmp.Compare(slices.Index(order, a.figure), slices.Index(order, b.figure)), compareGroups(a.group, b.group))
	})
	out := make([]Series, 0, len(keys))
	for _, k := range keys {
		out = append(out, x.points(k.figure, k.group, x.series[k]))
	}
	for f, name := range perCPUFigures {
		for cpu, accs := range x.perCPU {
			if accs != nil && len(accs[f].b) > 0 {
				out = append(out, x.points(name, "cpu"+strconv.Itoa(cpu), accs[f]))
			}
		}
	}
	return out
}

// compareGroups orders core types as P, E, LP-E, then "all", "package",
// then any other.
func compareGroups(a, b string) int {
	rank := func(g string) int {
		if i := slices.Index([]string{"P", "E", "LP-E", "all", "package"}, g); i >= 0 {
			return i
		}
		return 5
	}
	return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a, b))
}

func sortedGroups(m map[string]*acc) []string {
	var gs []string
	for g := range m {
		gs = append(gs, g)
	}
	slices.SortFunc(gs, compareGroups)
	return gs
}

// bucketStart is bucket i's start in seconds from the run's start.
func (x *runBuilder) bucketStart(i int) float64 { return seconds(int64(i) * x.clk.width) }

// points returns a series' non-empty buckets and frees the buckets.
func (x *runBuilder) points(figure, group string, a *acc) Series {
	n := 0
	for _, b := range a.b {
		if b.n > 0 {
			n++
		}
	}
	s := Series{Figure: figure, Group: group, Unit: units[figure],
		T: make([]float64, 0, n), Min: make([]float64, 0, n), Max: make([]float64, 0, n), Mean: make([]float64, 0, n), N: make([]int, 0, n)}
	defer func() { a.b = nil }()
	for i, b := range a.b {
		if b.n == 0 {
			continue
		}
		s.T = append(s.T, x.bucketStart(i))
		s.Min = append(s.Min, b.min)
		s.Max = append(s.Max, b.max)
		s.Mean = append(s.Mean, round4(b.sum/float64(b.n)))
		s.N = append(s.N, b.n)
	}
	return s
}

// round4 rounds to 4 decimals, the finest a recorded figure has.
func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }

// limitBands names the limit reason bits as the SDM's table for the
// model does (hwp.SDMCoreLimitTable), or bitN, and returns the bands of
// each.
func (x *runBuilder) limitBands() (string, []Band) {
	names := map[int]string{}
	table := "raw bits: no MSR_CORE_PERF_LIMIT_REASONS table for this model"
	if t, ok := hwp.SDMCoreLimitTable(uint32(x.meta.Host.Family), uint32(x.meta.Host.Model)); ok {
		table = t.Name
		for _, r := range t.Reasons {
			names[int(r.Bit)] = r.Name
		}
	}
	var out []Band
	for b, a := range x.limitBits {
		if a == nil {
			continue
		}
		name, ok := names[b]
		if !ok {
			name = fmt.Sprintf("bit%d", b)
		}
		out = append(out, x.bands(name, "package", a, x.limits)...)
	}
	if len(x.limits.b) == 0 {
		table = ""
	}
	return table, out
}

// bands returns the intervals of consecutive buckets where set has
// samples, with the share of all's samples there that set counted;
// buckets without any sample do not break a band.
func (x *runBuilder) bands(name, group string, set, all *acc) []Band {
	var out []Band
	var cur *Band
	var n, k int
	flush := func() {
		if cur != nil {
			cur.Share = round4(float64(k) / float64(max(n, 1)))
			out = append(out, *cur)
			cur = nil
		}
	}
	for i, b := range all.b {
		var hit int
		if i < len(set.b) {
			hit = set.b[i].n
		}
		switch {
		case b.n == 0:
		case hit == 0:
			flush()
		case cur == nil:
			cur, n, k = &Band{Name: name, Group: group, From: x.bucketStart(i)}, 0, 0
			fallthrough
		default:
			cur.To = x.bucketStart(i + 1)
			n, k = n+b.n, k+hit
		}
	}
	flush()
	return out
}

// requestSteps turns the request fields' buckets into steps: one where
// the range of values held changes.
func (x *runBuilder) requestSteps() []Steps {
	keys := make([]stepKey, 0, len(x.steps))
	for k := range x.steps {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b stepKey) int {
		return cmp.Or(cmp.Compare(a.msr, b.msr), cmp.Compare(a.field, b.field), compareGroups(a.group, b.group))
	})
	var out []Steps
	for _, k := range keys {
		s := Steps{Register: regName(k.msr), Field: requestFields[k.field], Group: k.group}
		for i, b := range x.steps[k].b {
			if b.n == 0 {
				continue
			}
			if n := len(s.Steps); n > 0 && s.Steps[n-1].Lo == b.min && s.Steps[n-1].Hi == b.max {
				continue
			}
			s.Steps = append(s.Steps, Step{T: x.bucketStart(i), Lo: b.min, Hi: b.max})
		}
		out = append(out, s)
	}
	return out
}
