// SPDX-License-Identifier: Apache-2.0

// Package summary condenses a recorded run into the figures `hwpprobe
// record` prints at the end and `hwpprobe show` prints for a file: the
// run's outcome, time-weighted turbostat averages per core type and for
// the machine, package energy, the register writes the kernel made, and the
// workload's process counters. It only reads recordings.
package summary

import (
	"cmp"
	"slices"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/internal/machine/regs"
)

// Row holds a core type's (or the machine's) figures averaged over a run.
// Averages are weighted as turbostat's counters would sum: Avg_MHz, Busy%
// and TSC_MHz by interval length, Bzy_MHz by busy time (MPERF), IPC by
// APERF (Avg_MHz x interval). Energy is the sum of watts x interval.
type Row struct {
	Type    string // "P", "E", "LP-E" or "all"
	CPUs    int
	AvgMHz  recording.Value
	BusyPct recording.Value
	BzyMHz  recording.Value
	TSCMHz  recording.Value
	IPC     recording.Value
	CoreTmp recording.Value // maximum
	PkgTmp  recording.Value // maximum ("all" row)
	// Watts and joules per RAPL domain ("all" row): PkgWatt, CorWatt,
	// GFXWatt, RAMWatt, SysWatt. A domain never measured is absent; use
	// Watt and Joule.
	Watts  map[string]recording.Value
	Joules map[string]recording.Value
}

// Watt returns a domain's mean power, NA when it was not measured.
func (r Row) Watt(domain string) recording.Value { return lookup(r.Watts, domain) }

// Joule returns a domain's energy over the run, NA when not measured.
func (r Row) Joule(domain string) recording.Value { return lookup(r.Joules, domain) }

func lookup(m map[string]recording.Value, k string) recording.Value {
	if v, ok := m[k]; ok {
		return v
	}
	return recording.NA()
}

// RegWrites summarises the kernel's writes to one MSR, or (Emulated) the
// writes an emulated machine's model made to it.
type RegWrites struct {
	MSR      uint32
	Name     string // catalog name, or the address in hex
	Emulated bool
	Writes   int
	Failed   int
	CPUs     cpus.List
	Values   []ValueCount // distinct values, most frequent first
	Writers  []Writer     // the processes, most writes first
}

// Writer is a process that wrote a register, and how often: for the
// kernel's writes the task running on the CPU at the time, for emulated
// ones the process whose sysfs write caused them.
type Writer struct {
	PID    int
	Comm   string
	Writes int
}

// ValueCount is one distinct register value and how often it was written
// (or seen).
type ValueCount struct {
	Raw   uint64
	Count int
	Text  string // turbostat-style decode, "" when the catalog lacks the register
}

// RegChange is a sampled register whose value changed during the run on
// one CPU.
type RegChange struct {
	MSR    uint32
	Name   string
	CPU    int
	Values []uint64 // successive distinct values, first one included
}

// Summary is one run condensed.
type Summary struct {
	Meta     recording.Meta
	Start    recording.RunStart
	End      *recording.RunEnd // nil when the file was cut during the run
	Duration time.Duration     // RunEnd - RunStart, or to the last sample
	Samples  int
	Interval time.Duration // median sample interval
	Rows     []Row         // per core type in the recorded order, then "all"
	Trace    []RegWrites   // by MSR, the kernel's before the emulated ones
	TraceN   int
	Emulated int // events of TraceN that an emulated machine's model made
	Lost     uint64
	Changes  []RegChange // sampled register changes
	Process  []recording.Process
	Notes    []recording.Note
}

// Summarize condenses run, which belongs to rec and holds its samples
// and trace events (recording.Read). For a recording scanned batch by
// batch (recording.Scan), use a Collector.
func Summarize(rec *recording.Recording, run *recording.Run) Summary {
	c := NewCollector()
	c.Add(recording.Samples{Run: run.Start.Run, CPUColumns: run.CPUColumns, PackageColumns: run.PackageColumns, Samples: run.Samples})
	c.Add(recording.Trace{Run: run.Start.Run, Events: run.Trace})
	return c.Summary(rec, run)
}

// Parts are the parts of sample batches a Collector uses: scan with
// recording.ScanFileParts(path, Parts, collector.Add) to decode no more.
const Parts = recording.PartCPURegColumns | recording.PartSummaries

// Collector gathers, batch by batch, what the summaries of a recording's
// runs need from their samples and trace events, keeping no rows: pass
// Add as recording.Scan's batch function, then ask for each run's
// Summary.
type Collector struct {
	runs map[int]*runAcc
	// cols are the indexes of the figures in the batch's columns,
	// cpuCols and pkgCols the columns they were found in.
	cols             columns
	cpuCols, pkgCols []string
}

// runAcc is what a Collector keeps of one run.
type runAcc struct {
	samples   int
	lastNs    int64
	intervals []int64
	order     []string // core types in order of appearance
	types     map[string]*typeAcc
	trace     traceAcc
	regs      regTracker // sampled register values by CPU
}

// NewCollector returns an empty Collector.
func NewCollector() *Collector { return &Collector{runs: map[int]*runAcc{}} }

func (c *Collector) run(id int) *runAcc {
	a := c.runs[id]
	if a == nil {
		a = &runAcc{types: map[string]*typeAcc{},
			trace: traceAcc{by: map[traceKey]*RegWrites{}, counts: map[traceKey]map[uint64]int{},
				writers: map[traceKey]map[writerKey]int{}}}
		c.runs[id] = a
	}
	return a
}

// Add takes in a Samples or Trace batch (other records are ignored). It
// keeps nothing of the batch's rows, so the batch may be reused after.
func (c *Collector) Add(r recording.Record) {
	switch b := r.(type) {
	case recording.Samples:
		if len(b.Samples) == 0 {
			return
		}
		a := c.run(b.Run)
		if c.cpuCols == nil || !slices.Equal(c.cpuCols, b.CPUColumns) || !slices.Equal(c.pkgCols, b.PackageColumns) {
			c.cols, c.cpuCols, c.pkgCols = newColumns(b), slices.Clone(b.CPUColumns), slices.Clone(b.PackageColumns)
		}
		regs := b.CPURegs
		if regs == nil {
			regs = recording.RegColumnsOf(b.Samples)
		}
		row := 0
		for i := range b.Samples {
			smp := &b.Samples[i]
			a.samples++
			a.lastNs = smp.TimeNs
			a.intervals = append(a.intervals, smp.IntervalNs)
			a.addSummaries(smp, c.cols)
			a.regs.add(smp.CPUs, regs, row, i > 0 && b.SameCPUs)
			row += len(smp.CPUs)
		}
	case recording.Trace:
		a := c.run(b.Run)
		for _, e := range b.Events {
			a.trace.add(e)
		}
	}
}

// Summary condenses run, which belongs to rec, from the batches added.
func (c *Collector) Summary(rec *recording.Recording, run *recording.Run) Summary {
	a := c.runs[run.Start.Run]
	if a == nil {
		a = c.run(run.Start.Run)
	}
	s := Summary{Meta: rec.Meta, Start: run.Start, End: run.End, Samples: a.samples,
		Process: run.Process, Notes: run.Notes, TraceN: a.trace.n, Lost: run.TraceLost}
	switch {
	case run.End != nil:
		s.Duration = time.Duration(run.End.TimeNs - run.Start.TimeNs)
	case a.samples > 0:
		s.Duration = time.Duration(a.lastNs - run.Start.TimeNs)
	}
	if len(a.intervals) > 0 {
		iv := slices.Clone(a.intervals)
		slices.Sort(iv)
		s.Interval = time.Duration(iv[len(iv)/2])
	}
	s.Rows = a.rows()
	s.Trace = a.trace.writes()
	s.Emulated = a.trace.emulated
	s.Changes = a.regs.changes()
	return s
}

// acc accumulates weighted sums of one column.
type acc struct{ sum, w float64 }

func (a *acc) add(v recording.Value, w float64) {
	if v.Valid() && w > 0 {
		a.sum += float64(v) * w
		a.w += w
	}
}

func (a acc) mean() recording.Value {
	if a.w == 0 {
		return recording.NA()
	}
	return recording.Value(a.sum / a.w)
}

func maxValue(a, b recording.Value) recording.Value {
	switch {
	case !b.Valid():
		return a
	case !a.Valid() || b > a:
		return b
	}
	return a
}

// Domains returns the RAPL columns summed into energy.
func Domains() []string { return []string{"PkgWatt", "CorWatt", "GFXWatt", "RAMWatt", "SysWatt"} }

// columns are the indexes of the figures a summary uses in a batch's
// columns (-1: absent).
type columns struct {
	avg, busy, bzy, tsc, ipc, ctmp, ptmp int
	domains                              []int // of Domains()
}

func newColumns(b recording.Samples) columns {
	col := func(name string) int { return slices.Index(b.CPUColumns, name) }
	c := columns{avg: col("Avg_MHz"), busy: col("Busy%"), bzy: col("Bzy_MHz"), tsc: col("TSC_MHz"),
		ipc: col("IPC"), ctmp: col("CoreTmp"), ptmp: slices.Index(b.PackageColumns, "PkgTmp")}
	for _, d := range Domains() {
		c.domains = append(c.domains, slices.Index(b.PackageColumns, d))
	}
	return c
}

// typeAcc accumulates one core type's (or the machine's) summary rows.
type typeAcc struct {
	row                      Row
	avg, busy, bzy, tsc, ipc acc
	watts                    map[string]*acc
	joules                   map[string]float64
}

func (a *runAcc) addSummaries(smp *recording.Sample, c columns) {
	dt := float64(smp.IntervalNs) / 1e9
	for i := range smp.Summaries {
		r := &smp.Summaries[i]
		st := a.types[r.Type]
		if st == nil {
			st = &typeAcc{row: Row{Type: r.Type, CPUs: r.CPUs, CoreTmp: recording.NA(), PkgTmp: recording.NA()},
				watts: map[string]*acc{}, joules: map[string]float64{}}
			a.types[r.Type] = st
			a.order = append(a.order, r.Type)
		}
		st.avg.add(r.Value(c.avg), dt)
		st.busy.add(r.Value(c.busy), dt)
		st.tsc.add(r.Value(c.tsc), dt)
		if b := r.Value(c.busy); b.Valid() {
			st.bzy.add(r.Value(c.bzy), float64(b)*dt)
		}
		if v := r.Value(c.avg); v.Valid() {
			st.ipc.add(r.Value(c.ipc), float64(v)*dt)
		}
		st.row.CoreTmp = maxValue(st.row.CoreTmp, r.Value(c.ctmp))
		st.row.PkgTmp = maxValue(st.row.PkgTmp, r.PackageValue(c.ptmp))
		for k, d := range Domains() {
			v := r.PackageValue(c.domains[k])
			if !v.Valid() {
				continue
			}
			if st.watts[d] == nil {
				st.watts[d] = &acc{}
			}
			st.watts[d].add(v, dt)
			st.joules[d] += float64(v) * dt
		}
	}
}

func (a *runAcc) rows() []Row {
	out := make([]Row, 0, len(a.order))
	for _, t := range a.order {
		st := a.types[t]
		r := st.row
		r.AvgMHz, r.BusyPct, r.BzyMHz, r.TSCMHz, r.IPC = st.avg.mean(), st.busy.mean(), st.bzy.mean(), st.tsc.mean(), st.ipc.mean()
		if len(st.watts) > 0 {
			r.Watts, r.Joules = map[string]recording.Value{}, map[string]recording.Value{}
			for d, w := range st.watts {
				r.Watts[d] = w.mean()
				r.Joules[d] = recording.Value(st.joules[d])
			}
		}
		out = append(out, r)
	}
	// "all" last, core types in the sampler's order before it.
	slices.SortStableFunc(out, func(a, b Row) int { return cmp.Compare(b2i(a.Type == "all"), b2i(b.Type == "all")) })
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// RegName names an MSR from the catalog, or gives its address.
func RegName(msr uint32) string {
	if r, ok := regs.ByAddress(msr); ok {
		return r.Name
	}
	return "MSR " + hex(uint64(msr))
}

// RegText decodes a value in turbostat's words, "" when the catalog lacks
// the register.
func RegText(msr uint32, v uint64) string {
	if r, ok := regs.ByAddress(msr); ok {
		return r.Decode(v, nil).Summary
	}
	return ""
}

// traceAcc counts a run's register writes by register, the kernel's
// apart from an emulated machine's.
type traceAcc struct {
	n        int
	emulated int // events an emulated machine's model made
	by       map[traceKey]*RegWrites
	counts   map[traceKey]map[uint64]int
	writers  map[traceKey]map[writerKey]int
}

type traceKey struct {
	msr      uint32
	emulated bool
}

type writerKey struct {
	pid  int
	comm string
}

func (t *traceAcc) add(e recording.TraceEvent) {
	t.n++
	if e.Emulated {
		t.emulated++
	}
	k := traceKey{e.MSR, e.Emulated}
	w := t.by[k]
	if w == nil {
		w = &RegWrites{MSR: e.MSR, Name: RegName(e.MSR), Emulated: e.Emulated}
		t.by[k] = w
		t.counts[k] = map[uint64]int{}
		t.writers[k] = map[writerKey]int{}
	}
	w.Writes++
	if e.Failed {
		w.Failed++
	}
	if i, ok := slices.BinarySearch(w.CPUs, e.CPU); !ok {
		w.CPUs = slices.Insert(w.CPUs, i, e.CPU)
	}
	t.counts[k][e.Value]++
	t.writers[k][writerKey{e.PID, e.Comm}]++
}

func (t *traceAcc) writes() []RegWrites {
	out := make([]RegWrites, 0, len(t.by))
	for k, w := range t.by {
		w := *w
		w.Values, w.Writers = nil, nil
		for v, n := range t.counts[k] {
			w.Values = append(w.Values, ValueCount{Raw: v, Count: n, Text: RegText(k.msr, v)})
		}
		slices.SortFunc(w.Values, func(a, b ValueCount) int {
			return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Raw, b.Raw))
		})
		for p, n := range t.writers[k] {
			w.Writers = append(w.Writers, Writer{PID: p.pid, Comm: p.comm, Writes: n})
		}
		slices.SortFunc(w.Writers, func(a, b Writer) int {
			return cmp.Or(cmp.Compare(b.Writes, a.Writes), cmp.Compare(a.PID, b.PID), cmp.Compare(a.Comm, b.Comm))
		})
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b RegWrites) int {
		return cmp.Or(cmp.Compare(b2i(a.Emulated), b2i(b.Emulated)), cmp.Compare(a.MSR, b.MSR))
	})
	return out
}
