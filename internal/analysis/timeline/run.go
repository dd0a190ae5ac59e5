// SPDX-License-Identifier: Apache-2.0

package timeline

import (
	"math"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/machine/regs"
)

// Figures taken per core type (from the sampler's summary rows) and per
// package, in the order series are listed.
var (
	cpuFigures    = []string{"Avg_MHz", "Bzy_MHz", "Busy%", "CoreTmp"}
	perCPUFigures = []string{"Avg_MHz", "Bzy_MHz", "Busy%"}
	pkgFigures    = []string{"PkgWatt", "CorWatt", "GFXWatt", "RAMWatt", "SysWatt", "PkgTmp"}
	units         = map[string]string{"Avg_MHz": "MHz", "Bzy_MHz": "MHz", "Busy%": "%", "CoreTmp": "°C",
		"PkgWatt": "W", "CorWatt": "W", "GFXWatt": "W", "RAMWatt": "W", "SysWatt": "W", "PkgTmp": "°C"}
)

// requestFields are the request register fields shown as steps.
var requestFields = []string{"min", "max", "desired", "epp"}

type seriesKey struct{ figure, group string }

type stepKey struct {
	msr   uint32
	field int
	group string
}

// runBuilder gathers one run as its records are read.
type runBuilder struct {
	meta  recording.Meta
	start recording.RunStart
	o     Options
	clk   *clock
	// series per figure and group, steps per register field and core
	// type; perCPU per CPU and figure of perCPUFigures.
	series map[seriesKey]*acc
	steps  map[stepKey]*acc
	perCPU [][]*acc
	// limits counts the package rows with MSR_CORE_PERF_LIMIT_REASONS per
	// bucket, limitBits those with each of bits 15:0 set.
	limits    *acc
	limitBits [16]*acc
	// status counts the rows with IA32_HWP_STATUS per group,
	// excursion those with Excursion_To_Minimum set.
	status, excursion map[string]*acc
	cpuType           []string // by CPU, from the sampled rows
	lastSampleNs      int64
	writes            writeLog
	snap              snapInfo
}

func newRunBuilder(m recording.Meta, s recording.RunStart, o Options) *runBuilder {
	iv := m.IntervalNs
	if iv <= 0 {
		iv = 100e6
	}
	x := &runBuilder{meta: m, start: s, o: o, clk: newClock(s.TimeNs, iv, o.maxPoints()),
		series: map[seriesKey]*acc{}, steps: map[stepKey]*acc{},
		status: map[string]*acc{}, excursion: map[string]*acc{}, lastSampleNs: s.TimeNs}
	x.limits = x.clk.newAcc()
	x.writes = newWriteLog(m, s.TimeNs, o.maxWrites())
	return x
}

func (x *runBuilder) acc(figure, group string) *acc {
	k := seriesKey{figure, group}
	a := x.series[k]
	if a == nil {
		a = x.clk.newAcc()
		x.series[k] = a
	}
	return a
}

func (x *runBuilder) groupAcc(m map[string]*acc, group string) *acc {
	a := m[group]
	if a == nil {
		a = x.clk.newAcc()
		m[group] = a
	}
	return a
}

// cols are the positions of the figures in one batch's columns.
type cols struct{ cpu, perCPU, pkg []int }

func colsOf(b recording.Samples) cols {
	idx := func(have, want []string) []int {
		out := make([]int, len(want))
		for i, w := range want {
			out[i] = -1
			for j, h := range have {
				if h == w {
					out[i] = j
				}
			}
		}
		return out
	}
	return cols{idx(b.CPUColumns, cpuFigures), idx(b.CPUColumns, perCPUFigures), idx(b.PackageColumns, pkgFigures)}
}

func (x *runBuilder) addSamples(b recording.Samples) {
	c := colsOf(b)
	for k := range b.Samples {
		s := &b.Samples[k]
		i := x.clk.index(s.TimeNs)
		x.lastSampleNs = max(x.lastSampleNs, s.TimeNs)
		x.addSummaries(i, s, c)
		x.addPackages(i, s, c)
		x.addCPUs(i, s, c)
	}
}

// addSummaries adds the core types' figures: the sampler's summary rows,
// or, for a file without them, the CPU rows averaged as "all".
func (x *runBuilder) addSummaries(i int, s *recording.Sample, c cols) {
	for _, row := range s.Summaries {
		for f, j := range c.cpu {
			if v := row.Value(j); v.Valid() {
				x.acc(cpuFigures[f], row.Type).add(i, float64(v), float64(v), float64(v))
			}
		}
	}
	if len(s.Summaries) > 0 || len(s.CPUs) == 0 {
		return
	}
	var sum [4]float64
	var n [4]int
	tmp := math.Inf(-1)
	for _, row := range s.CPUs {
		for f, j := range c.cpu {
			if v := row.Value(j); v.Valid() {
				sum[f] += float64(v)
				n[f]++
				if cpuFigures[f] == "CoreTmp" {
					tmp = math.Max(tmp, float64(v))
				}
			}
		}
	}
	// turbostat's summary: Avg_MHz and Busy% averaged, Bzy_MHz from
	// their sums, the hottest core.
	vals := [4]float64{sum[0] / float64(n[0]), sum[0] / sum[2] * 100, sum[2] / float64(n[2]), tmp}
	ok := [4]bool{n[0] > 0, n[0] > 0 && n[2] > 0 && sum[2] > 0, n[2] > 0, n[3] > 0}
	for f, v := range vals {
		if ok[f] {
			x.acc(cpuFigures[f], "all").add(i, v, v, v)
		}
	}
}

// addPackages adds the package figures (watts summed over packages, the
// hottest package), limit reasons and a package's HWP_STATUS.
func (x *runBuilder) addPackages(i int, s *recording.Sample, c cols) {
	for f, j := range c.pkg {
		var v float64
		n := 0
		for _, p := range s.Packages {
			w := p.Value(j)
			switch {
			case !w.Valid():
				continue
			case n == 0:
				v = float64(w)
			case pkgFigures[f] == "PkgTmp":
				v = math.Max(v, float64(w))
			default:
				v += float64(w)
			}
			n++
		}
		if n > 0 {
			x.acc(pkgFigures[f], "package").add(i, v, v, v)
		}
	}
	for _, p := range s.Packages {
		if v, ok := p.Reg(hwp.MSR_CORE_PERF_LIMIT_REASONS); ok {
			x.limits.add(i, 0, 0, 0)
			for b := range x.limitBits {
				if v>>b&1 == 0 {
					continue
				}
				if x.limitBits[b] == nil {
					x.limitBits[b] = x.clk.newAcc()
				}
				x.limitBits[b].add(i, 1, 1, 1)
			}
		}
		if v, ok := p.Reg(hwp.MSR_IA32_HWP_STATUS); ok {
			x.addStatus(i, "package", v)
		}
	}
}

func (x *runBuilder) addStatus(i int, group string, v uint64) {
	x.groupAcc(x.status, group).add(i, 0, 0, 0)
	if hwp.DecodeStatus(v).ExcursionMin {
		x.groupAcc(x.excursion, group).add(i, 1, 1, 1)
	}
}

// reqRange is the range of each request field over a group's CPUs in one
// sample.
type reqRange struct {
	group  string
	msr    uint32
	lo, hi [4]float64
}

// addCPUs adds what the CPU rows hold: the request registers as ranges
// per core type, HWP_STATUS, and the per-CPU figures.
func (x *runBuilder) addCPUs(i int, s *recording.Sample, c cols) {
	var ranges []reqRange
	for k := range s.CPUs {
		row := &s.CPUs[k]
		group := typeName(row.CoreType)
		x.setType(row.CPU, group)
		if msr, f, ok := requestOf(row); ok {
			ranges = addRange(ranges, group, msr, f)
		}
		if v, ok := row.Reg(hwp.MSR_IA32_HWP_STATUS); ok {
			x.addStatus(i, group, v)
		}
		if x.o.PerCPU {
			x.addPerCPU(i, row, c)
		}
	}
	for _, r := range ranges {
		for f := range requestFields {
			k := stepKey{r.msr, f, r.group}
			a := x.steps[k]
			if a == nil {
				a = x.clk.newAcc()
				x.steps[k] = a
			}
			a.add(i, r.lo[f], r.hi[f], r.lo[f])
		}
	}
}

func (x *runBuilder) addPerCPU(i int, row *recording.CPURow, c cols) {
	if row.CPU < 0 || row.CPU > 1<<20 {
		return
	}
	for row.CPU >= len(x.perCPU) {
		x.perCPU = append(x.perCPU, nil)
	}
	if x.perCPU[row.CPU] == nil {
		x.perCPU[row.CPU] = make([]*acc, len(perCPUFigures))
		for f := range perCPUFigures {
			x.perCPU[row.CPU][f] = x.clk.newAcc()
		}
	}
	for f, j := range c.perCPU {
		if v := row.Value(j); v.Valid() {
			x.perCPU[row.CPU][f].add(i, float64(v), float64(v), float64(v))
		}
	}
}

func (x *runBuilder) setType(cpu int, group string) {
	if cpu < 0 || cpu > 1<<20 {
		return
	}
	for cpu >= len(x.cpuType) {
		x.cpuType = append(x.cpuType, "")
	}
	x.cpuType[cpu] = group
}

// typeName is a CPU row's core type as a group: "all" when not hybrid.
func typeName(t string) string {
	if t == "" {
		return "all"
	}
	return t
}

// requestOf returns the row's request register and its fields in
// requestFields order.
func requestOf(row *recording.CPURow) (uint32, [4]float64, bool) {
	for _, r := range regs.Requests() {
		if v, ok := row.Reg(r.Address); ok {
			q, _ := regs.RequestFrom(r.Address, v)
			return r.Address, [4]float64{float64(q.Min), float64(q.Max), float64(q.Desired), float64(q.EPP)}, true
		}
	}
	return 0, [4]float64{}, false
}

func addRange(rs []reqRange, group string, msr uint32, f [4]float64) []reqRange {
	for k := range rs {
		r := &rs[k]
		if r.group == group && r.msr == msr {
			for j := range f {
				r.lo[j], r.hi[j] = math.Min(r.lo[j], f[j]), math.Max(r.hi[j], f[j])
			}
			return rs
		}
	}
	return append(rs, reqRange{group: group, msr: msr, lo: f, hi: f})
}

func (x *runBuilder) addSnapshot(s recording.Snapshot) {
	if s.Phase != recording.PhaseBefore || x.snap.read {
		return
	}
	x.snap = readSnapshot(s)
	x.writes.setBefore(x.snap)
}

func (x *runBuilder) addTrace(evs []recording.TraceEvent) { x.writes.add(evs) }

// regName names a register from the catalog.
func regName(msr uint32) string {
	if r, ok := regs.ByAddress(msr); ok {
		return r.Name
	}
	return "MSR " + hexString(uint64(msr))
}
