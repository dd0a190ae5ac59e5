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

	"github.com/hwpprobe/hwpprobe/cpus"
	"github.com/hwpprobe/hwpprobe/recording"
	"github.com/hwpprobe/hwpprobe/regs"
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

// Summarize condenses run, which belongs to rec.
func Summarize(rec *recording.Recording, run *recording.Run) Summary {
	s := Summary{Meta: rec.Meta, Start: run.Start, End: run.End, Samples: len(run.Samples),
		Process: run.Process, Notes: run.Notes, TraceN: len(run.Trace), Lost: run.TraceLost}
	switch {
	case run.End != nil:
		s.Duration = time.Duration(run.End.TimeNs - run.Start.TimeNs)
	case len(run.Samples) > 0:
		s.Duration = time.Duration(run.Samples[len(run.Samples)-1].TimeNs - run.Start.TimeNs)
	}
	if len(run.Samples) > 0 {
		iv := make([]int64, len(run.Samples))
		for i, x := range run.Samples {
			iv[i] = x.IntervalNs
		}
		slices.Sort(iv)
		s.Interval = time.Duration(iv[len(iv)/2])
	}
	s.Rows = rows(run)
	s.Trace = traceWrites(run.Trace)
	for _, e := range run.Trace {
		if e.Emulated {
			s.Emulated++
		}
	}
	s.Changes = sampledChanges(run)
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

func rows(run *recording.Run) []Row {
	col := func(name string) int { return run.Column(name) }
	avg, busy, bzy, tsc, ipc, ctmp := col("Avg_MHz"), col("Busy%"), col("Bzy_MHz"), col("TSC_MHz"), col("IPC"), col("CoreTmp")
	ptmp := run.PackageColumn("PkgTmp")
	type state struct {
		row                      Row
		avg, busy, bzy, tsc, ipc acc
		watts                    map[string]*acc
		joules                   map[string]float64
	}
	var order []string
	by := map[string]*state{}
	for _, smp := range run.Samples {
		dt := float64(smp.IntervalNs) / 1e9
		for _, r := range smp.Summaries {
			st := by[r.Type]
			if st == nil {
				st = &state{row: Row{Type: r.Type, CPUs: r.CPUs, CoreTmp: recording.NA(), PkgTmp: recording.NA()},
					watts: map[string]*acc{}, joules: map[string]float64{}}
				by[r.Type] = st
				order = append(order, r.Type)
			}
			st.avg.add(r.Value(avg), dt)
			st.busy.add(r.Value(busy), dt)
			st.tsc.add(r.Value(tsc), dt)
			if b := r.Value(busy); b.Valid() {
				st.bzy.add(r.Value(bzy), float64(b)*dt)
			}
			if a := r.Value(avg); a.Valid() {
				st.ipc.add(r.Value(ipc), float64(a)*dt)
			}
			st.row.CoreTmp = maxValue(st.row.CoreTmp, r.Value(ctmp))
			st.row.PkgTmp = maxValue(st.row.PkgTmp, r.PackageValue(ptmp))
			for _, d := range Domains() {
				v := r.PackageValue(run.PackageColumn(d))
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
	out := make([]Row, 0, len(order))
	for _, t := range order {
		st := by[t]
		r := st.row
		r.AvgMHz, r.BusyPct, r.BzyMHz, r.TSCMHz, r.IPC = st.avg.mean(), st.busy.mean(), st.bzy.mean(), st.tsc.mean(), st.ipc.mean()
		if len(st.watts) > 0 {
			r.Watts, r.Joules = map[string]recording.Value{}, map[string]recording.Value{}
			for d, a := range st.watts {
				r.Watts[d] = a.mean()
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

// traceWrites groups the writes by register, the kernel's apart from an
// emulated machine's.
func traceWrites(evs []recording.TraceEvent) []RegWrites {
	type key struct {
		msr      uint32
		emulated bool
	}
	type writer struct {
		pid  int
		comm string
	}
	by := map[key]*RegWrites{}
	counts := map[key]map[uint64]int{}
	writers := map[key]map[writer]int{}
	for _, e := range evs {
		k := key{e.MSR, e.Emulated}
		w := by[k]
		if w == nil {
			w = &RegWrites{MSR: e.MSR, Name: RegName(e.MSR), Emulated: e.Emulated}
			by[k] = w
			counts[k] = map[uint64]int{}
			writers[k] = map[writer]int{}
		}
		w.Writes++
		if e.Failed {
			w.Failed++
		}
		if !w.CPUs.Contains(e.CPU) {
			w.CPUs = append(w.CPUs, e.CPU)
			slices.Sort(w.CPUs)
		}
		counts[k][e.Value]++
		writers[k][writer{e.PID, e.Comm}]++
	}
	out := make([]RegWrites, 0, len(by))
	for k, w := range by {
		for v, n := range counts[k] {
			w.Values = append(w.Values, ValueCount{Raw: v, Count: n, Text: RegText(k.msr, v)})
		}
		slices.SortFunc(w.Values, func(a, b ValueCount) int {
			return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Raw, b.Raw))
		})
		for p, n := range writers[k] {
			w.Writers = append(w.Writers, Writer{PID: p.pid, Comm: p.comm, Writes: n})
		}
		slices.SortFunc(w.Writers, func(a, b Writer) int {
			return cmp.Or(cmp.Compare(b.Writes, a.Writes), cmp.Compare(a.PID, b.PID), cmp.Compare(a.Comm, b.Comm))
		})
		out = append(out, *w)
	}
	slices.SortFunc(out, func(a, b RegWrites) int {
		if a.Emulated != b.Emulated {
			if a.Emulated {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.MSR, b.MSR)
	})
	return out
}

func sampledChanges(run *recording.Run) []RegChange {
	type key struct {
		cpu int
		msr uint32
	}
	seq := map[key][]uint64{}
	for _, smp := range run.Samples {
		for _, c := range smp.CPUs {
			for _, g := range c.Regs {
				k := key{c.CPU, g.MSR}
				if v := seq[k]; len(v) == 0 || v[len(v)-1] != g.Value {
					seq[k] = append(v, g.Value)
				}
			}
		}
	}
	var out []RegChange
	for k, v := range seq {
		if len(v) > 1 {
			out = append(out, RegChange{MSR: k.msr, Name: RegName(k.msr), CPU: k.cpu, Values: v})
		}
	}
	slices.SortFunc(out, func(a, b RegChange) int { return cmp.Or(cmp.Compare(a.MSR, b.MSR), cmp.Compare(a.CPU, b.CPU)) })
	return out
}
