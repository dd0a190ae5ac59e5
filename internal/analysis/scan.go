// SPDX-License-Identifier: Apache-2.0

package analysis

import (
	"cmp"
	"slices"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/files/recording/summary"
	"github.com/hwpprobe/hwpprobe/internal/kernel/topology"
	"github.com/hwpprobe/hwpprobe/internal/rowindex"
	"github.com/hwpprobe/hwpprobe/rapl"
)

// scanner gathers, record by record, what the analysis needs of a
// recording's runs (their summaries and their evidence), keeping no rows:
// it is recording.Scan's batch function for ReadSources, and is fed a
// whole recording's runs for a Source read into memory.
type scanner struct {
	host recording.Host
	col  *summary.Collector
	runs map[int]*runScan
}

func newScanner(host recording.Host) *scanner {
	return &scanner{host: host, col: summary.NewCollector(), runs: map[int]*runScan{}}
}

// add takes in one record of the recording, in file order.
func (sc *scanner) add(r recording.Record) error {
	sc.col.Add(r)
	switch b := r.(type) {
	case recording.RunStart:
		sc.runs[b.Run] = newRunScan(b, sc.host.Driver)
	case recording.Samples:
		if x := sc.runs[b.Run]; x != nil {
			x.addSamples(b.Samples)
			x.facts.addSamples(b, sc.host)
		}
	case recording.Snapshot:
		if x := sc.runs[b.Run]; x != nil {
			x.facts.addSnapshot(b)
		}
	case recording.Trace:
		if x := sc.runs[b.Run]; x != nil {
			x.addTrace(b.Events)
		}
	}
	return nil
}

// addRun feeds a run read into memory, as a scan would have: its start,
// the snapshot before, its samples and trace, the snapshot after.
func (sc *scanner) addRun(run *recording.Run) {
	id := run.Start.Run
	recs := []recording.Record{run.Start}
	snaps := func(phase string) {
		for _, s := range run.Snapshots {
			if s.Phase == phase {
				recs = append(recs, s)
			}
		}
	}
	snaps(recording.PhaseBefore)
	recs = append(recs, recording.Samples{Run: id, CPUColumns: run.CPUColumns, PackageColumns: run.PackageColumns, Samples: run.Samples},
		recording.Trace{Run: id, Events: run.Trace})
	snaps(recording.PhaseAfter)
	for _, r := range recs {
		_ = sc.add(r)
	}
}

// result returns a run's summary, evidence and facts.
func (sc *scanner) result(rec *recording.Recording, run *recording.Run) (summary.Summary, runEvidence, RunFacts) {
	x := sc.runs[run.Start.Run]
	if x == nil {
		x = newRunScan(run.Start, sc.host.Driver)
	}
	sum := sc.col.Summary(rec, run)
	return sum, x.evidence(sc.host), x.facts.facts(sum)
}

// runScan is what a scanner keeps of one run: per CPU and register, the
// values held and how many samples held each; per CPU and writer, the
// values written; the disturbances found so far.
type runScan struct {
	start  int64
	driver string
	// from: traced writes from then on are the run's (the check's time,
	// recording.Held, or the run's start).
	from    int64
	cpus    rowindex.Index[cpuScan]
	sampled []Disturbance
	traced  []Disturbance
	// seed are the request registers the check just before the run read,
	// by (cpu, msr); nil when the run was not checked.
	seed map[[2]uint64]uint64
	// heldNow holds each request register's value: the seed's, or without
	// one the run's first sample's (sampledYet), then each traced write's.
	sampledYet bool
	heldNow    map[[2]uint64]uint64
	// pending are the traced request writes that came before the run's
	// first sample in a run without a seed whose old values the trace
	// does not give; they are checked against that sample once it comes.
	pending   []recording.TraceEvent
	writes    map[writeKey]int
	limitVals map[uint64]int // MSR_CORE_PERF_LIMIT_REASONS value -> samples
	limitN    int
	status    map[string]statusCount // core type of the rows ("" when not hybrid) -> CPU-samples
	facts     *factScan
}

// cpuScan is one CPU of a run.
type cpuScan struct {
	cpu  int
	typ  string // the last core type its rows gave ("" -> "all")
	regs []regScan
}

// regScan is one register of one CPU: its values and their sample
// counts, the count of the last value pending in run.
type regScan struct {
	msr    uint32
	first  uint64
	last   uint64
	run    int
	counts map[uint64]int
}

// writeKey is one value written by one process to one CPU's register.
type writeKey struct {
	cpu   int
	comm  string
	msr   uint32
	value uint64
}

// newRunScan starts a run's scan from its run-start record: with its
// check (recording.Held), the registers it read are the values the
// run's samples and traced writes are checked against.
func newRunScan(start recording.RunStart, driver string) *runScan {
	x := &runScan{start: start.TimeNs, from: start.TimeNs, driver: driver,
		writes: map[writeKey]int{}, limitVals: map[uint64]int{}, status: map[string]statusCount{},
		facts: newFactScan(start.TimeNs)}
	if h := start.Held; h != nil {
		if h.TimeNs > 0 && h.TimeNs < start.TimeNs {
			x.from = h.TimeNs
		}
		x.seed, x.heldNow = map[[2]uint64]uint64{}, map[[2]uint64]uint64{}
		for _, g := range h.Regs {
			k := [2]uint64{uint64(g.CPU), uint64(g.MSR)}
			x.seed[k], x.heldNow[k] = g.Value, g.Value
		}
	}
	return x
}

func newCPUScan(id int) *cpuScan { return &cpuScan{cpu: id} }

func (c *cpuScan) reg(j int, msr uint32) *regScan {
	if j < len(c.regs) && c.regs[j].msr == msr {
		return &c.regs[j]
	}
	for k := range c.regs {
		if c.regs[k].msr == msr {
			return &c.regs[k]
		}
	}
	c.regs = append(c.regs, regScan{msr: msr, counts: map[uint64]int{}})
	return &c.regs[len(c.regs)-1]
}

func (x *runScan) addSamples(samples []recording.Sample) {
	for i := range samples {
		s := &samples[i]
		if !x.sampledYet {
			x.firstSample(s)
		}
		for k := range s.CPUs {
			row := &s.CPUs[k]
			c := x.cpus.At(k, row.CPU, newCPUScan)
			c.typ = row.CoreType
			for j, g := range row.Regs {
				x.addReg(c, c.reg(j, g.MSR), g.Value, s.TimeNs)
			}
			if v, ok := row.Reg(hwp.MSR_IA32_HWP_STATUS); ok {
				x.status[row.CoreType] = x.status[row.CoreType].add(v)
			}
		}
		for _, p := range s.Packages {
			if v, ok := p.Reg(hwp.MSR_CORE_PERF_LIMIT_REASONS); ok {
				x.limitN++
				x.limitVals[v]++
			}
		}
	}
}

// addReg counts a sampled value and marks a change of the settings' bits
// of a request register: from the sample before, or for the first sample
// from what the check before the run read.
func (x *runScan) addReg(c *cpuScan, r *regScan, v uint64, timeNs int64) {
	switch {
	case r.run > 0 && r.last == v:
		r.run++
		return
	case r.run > 0:
		r.counts[r.last] += r.run
		x.sampledChange(c.cpu, r.msr, r.last, v, timeNs)
	default: // its first sample
		r.first = v
		if old, ok := x.seed[[2]uint64{uint64(c.cpu), uint64(r.msr)}]; ok {
			x.sampledChange(c.cpu, r.msr, old, v, timeNs)
		}
	}
	r.last, r.run = v, 1
}

// sampledChange marks a sampled request register that went from old to
// v in the bits the settings fix.
func (x *runScan) sampledChange(cpu int, msr uint32, old, v uint64, timeNs int64) {
	if slices.Contains(requestMSRs, msr) && SettingBits(msr, old, x.driver) != SettingBits(msr, v, x.driver) {
		x.sampled = append(x.sampled, disturbance("", 0, timeNs-x.start, cpu, msr, old, v))
	}
}

// firstSample takes the run's first sample's registers as held when no
// check before the run read them, and checks the writes traced before it.
func (x *runScan) firstSample(s *recording.Sample) {
	x.sampledYet = true
	if x.seed != nil {
		return
	}
	x.heldNow = map[[2]uint64]uint64{}
	for _, c := range s.CPUs {
		for _, g := range c.Regs {
			x.heldNow[[2]uint64{uint64(c.CPU), uint64(g.MSR)}] = g.Value
		}
	}
	for _, e := range x.pending {
		x.checkWrite(e)
	}
	x.pending = nil
}

// addTrace counts the kernel's writes by CPU and writer, and marks every
// write from the run's check (or start) on that changed the bits of a
// request register its settings fix.
func (x *runScan) addTrace(events []recording.TraceEvent) {
	for _, e := range events {
		x.writes[writeKey{e.CPU, e.Comm, e.MSR, e.Value}]++
		if e.MSR == rapl.MSR_PKG_POWER_LIMIT && !e.Failed && e.TimeNs >= x.start {
			x.facts.addWrite(e)
		}
		switch {
		case e.Failed || !slices.Contains(requestMSRs, e.MSR) || e.TimeNs < x.from:
		case !x.sampledYet && x.seed == nil && !e.Emulated:
			x.pending = append(x.pending, e)
		default:
			x.checkWrite(e)
		}
	}
}

// checkWrite marks a traced write that changed the bits the settings fix,
// as old -> new: old is the value before the write as an emulated
// machine logs it, or the value held before (the check's, the last
// write's, or the first sample's).
func (x *runScan) checkWrite(e recording.TraceEvent) {
	if x.heldNow == nil {
		x.heldNow = map[[2]uint64]uint64{}
	}
	k := [2]uint64{uint64(e.CPU), uint64(e.MSR)}
	old, ok := x.heldNow[k]
	if e.Emulated {
		old, ok = e.Old, true
	}
	if !ok && slices.Contains(activeDrivers, x.driver) || ok && SettingBits(e.MSR, old, x.driver) != SettingBits(e.MSR, e.Value, x.driver) {
		d := disturbance(e.Comm, e.PID, e.TimeNs-x.start, e.CPU, e.MSR, old, e.Value)
		if !ok {
			d.OldHex = "?"
		}
		x.traced = append(x.traced, d)
	}
	x.heldNow[k] = e.Value
}

// evidence condenses the run by core type.
func (x *runScan) evidence(host recording.Host) runEvidence {
	ev := runEvidence{driver: x.driver, held: map[string]fieldCounter{}, written: map[string]map[string]fieldCounter{},
		writes: map[string]map[string]int{}, limits: map[string]int{}, first: map[[2]uint64]uint64{},
		limitN: x.limitN, status: x.status}
	typeOf := func(cpu int) string {
		if c := x.cpus.ByCPU[cpu]; c != nil && c.typ != "" {
			return c.typ
		}
		return string(topology.All)
	}
	for id, c := range x.cpus.ByCPU {
		t := typeOf(id)
		if ev.held[t] == nil {
			ev.held[t] = fieldCounter{}
		}
		for _, r := range c.regs {
			for v, n := range r.counts {
				ev.held[t].add(r.msr, v, n)
			}
			ev.held[t].add(r.msr, r.last, r.run)
			if slices.Contains(requestMSRs, r.msr) {
				ev.first[[2]uint64{uint64(id), uint64(r.msr)}] = r.first
			}
		}
	}
	for k, n := range x.writes {
		t := typeOf(k.cpu)
		if ev.written[t] == nil {
			ev.written[t], ev.writes[t] = map[string]fieldCounter{}, map[string]int{}
		}
		if ev.written[t][k.comm] == nil {
			ev.written[t][k.comm] = fieldCounter{}
		}
		ev.written[t][k.comm].add(k.msr, k.value, n)
		ev.writes[t][k.comm] += n
	}
	for v, n := range x.limitVals {
		for _, r := range limitReasons(v, host) {
			ev.limits[r] += n
		}
	}
	for _, e := range x.pending {
		x.checkWrite(e)
	}
	x.pending = nil
	ev.disturbance = append(slices.Clone(x.sampled), x.traced...)
	// The writers first (they name the cause), then by time.
	slices.SortStableFunc(ev.disturbance, func(a, b Disturbance) int {
		return cmp.Or(cmp.Compare(b2i(a.Comm == ""), b2i(b.Comm == "")), cmp.Compare(a.OffsetNs, b.OffsetNs))
	})
	return ev
}
