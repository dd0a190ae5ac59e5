// SPDX-License-Identifier: Apache-2.0

// Package testexp writes synthetic experiment recordings for the tests of
// analysis, report and the diff command: two sides with the HWP requests
// intel_pstate writes for the performance governor (min = max, EPP 0) and
// for powersave with EPP performance (min < max, EPP 16 on Meteor Lake),
// on a hybrid machine with P and E cores.
package testexp

import (
	"bytes"
	"fmt"
	"io"
	"slices"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/machine/regs"
)

// hwpRequest and epbReg are the Intel request and EPB registers' addresses.
var (
	hwpRequest = regs.RequestOf(regs.Intel).Address
	epbReg     = regs.EPB().Address
)

// Side describes one side's runs.
type Side struct {
	Label    string
	Settings []recording.Setting
	Request  uint64 // the HWP_REQUEST every CPU holds
	EPB      uint64
	Seconds  []float64 // one run per value
	Watts    float64
	BzyMHz   float64
}

// Experiment is a synthetic experiment.
type Experiment struct {
	A, B Side
	// Warmup adds a warm-up run of side A first.
	Warmup bool
	// Disturb adds, to side B's first run, a write by thermald changing
	// CPU 0's HWP_REQUEST in the middle of the run.
	Disturb bool
	// TraceFirst writes each run's trace batch, thermald's write
	// included, before its samples batch, as a tracer flushing first
	// would.
	TraceFirst bool
	// CutAfter stops writing after that many runs (0: all) without an
	// end record, as a crash would.
	CutAfter int
	// Misheld makes side B's second measured run hold EPP 128 from its
	// start, with no write seen (settings changed between runs).
	Misheld bool
	// Record writes what hwpprobe record writes: side A's runs only,
	// without sides.
	Record bool
	// Context is the run context written in the meta record; nil none.
	Context *recording.Context
	// Checked gives every run the check an experiment makes just before
	// its command starts (recording.Held): CPUs 0-3's HWP_REQUEST and EPB
	// as the side's settings left them, read 2 ms before the run.
	Checked bool
	// Switch, when not 0, is the HWP_REQUEST that side A's command writes
	// to CPU 0 a millisecond into each of its measured runs, before the
	// first sample, which then holds it: a workload that changes the
	// settings.
	Switch uint64
	// SwitchEmulated traces Switch's writes as an emulated machine logs
	// them, with the value before (recording.TraceEvent.Old).
	SwitchEmulated bool
	// Stopping, when not nil, is the stopping rule's account the end
	// record holds (an experiment run with --runs auto).
	Stopping *recording.Stopping
	// Unheld lists side B's measured runs (1 its first) whose check found
	// CPU 0's energy_performance_preference balance_power where the side
	// had set performance.
	Unheld []int
}

// Request builds an IA32_HWP_REQUEST value.
func Request(min, max, desired, epp uint64) uint64 {
	return min | max<<8 | desired<<16 | epp<<24
}

// Performance and PowersaveEPPPerformance are the two sides of the
// project's seed report on a Core Ultra 7 165U (highest 0x30, lowest 4).
var (
	Performance             = Request(0x30, 0x30, 0, 0)
	PowersaveEPPPerformance = Request(0x04, 0x30, 0, 16)
)

const t0 = int64(1_700_000_000_000_000_000)

// Write writes the experiment as a recording to w.
func (e Experiment) Write(w io.Writer) error {
	meta := recording.Meta{Tool: "hwpprobe", ToolVersion: "test", Kind: "diff", TimeNs: t0, IntervalNs: 1e9, CPUs: "0-3",
		Host:  recording.Host{Hostname: "test", Kernel: "6.18.0", Vendor: "GenuineIntel", CPUModel: "Intel(R) Core(TM) Ultra 7 165U", Family: 6, Model: 0xAA, Microcode: "0x20", Driver: "intel_pstate"},
		Sides: []recording.Side{{Label: e.A.Label, Settings: e.A.Settings}, {Label: e.B.Label, Settings: e.B.Settings}}}
	meta.Context = e.Context
	if e.Record {
		meta.Kind, meta.Sides = "record", nil
		e.B.Seconds = nil
	}
	rw, err := recording.NewWriter(w, meta)
	if err != nil {
		return err
	}
	type run struct {
		side   *Side
		secs   float64
		warmup bool
	}
	var runs []run
	if e.Warmup {
		runs = append(runs, run{&e.A, e.A.Seconds[0] * 1.1, true})
	}
	// ABBA order.
	for i := 0; i < max(len(e.A.Seconds), len(e.B.Seconds)); i++ {
		first, second := &e.A, &e.B
		if i%2 == 1 {
			first, second = second, first
		}
		for _, s := range []*Side{first, second} {
			if i < len(s.Seconds) {
				runs = append(runs, run{s, s.Seconds[i], false})
			}
		}
	}
	now := t0
	disturbed := false
	bRuns := 0
	for i, r := range runs {
		if e.CutAfter > 0 && i == e.CutAfter {
			// A crash in the middle of a run: its start and nothing else.
			return rw.Write(recording.RunStart{Run: i + 1, Side: r.side.Label, TimeNs: now, Command: []string{"make"}})
		}
		o := runOpts{id: i + 1, start: now, secs: r.secs, warmup: r.warmup}
		o.disturb = !disturbed && e.Disturb && r.side == &e.B && !r.warmup
		disturbed = disturbed || o.disturb
		side := r.side
		if r.side == &e.B && !r.warmup {
			bRuns++
			if e.Misheld && bRuns == 2 {
				mis := *r.side
				mis.Request = Request(0x04, 0x30, 0, 128)
				side = &mis
			}
			o.unheld = slices.Contains(e.Unheld, bRuns)
		}
		if r.side == &e.A && !r.warmup {
			o.sw = e.Switch
		}
		if err := e.writeRun(rw, side, o); err != nil {
			return err
		}
		now += int64(r.secs*1e9) + 5e9
	}
	if e.CutAfter > 0 {
		return nil
	}
	return rw.Close(recording.End{TimeNs: now, Status: recording.StatusComplete, Stopping: e.Stopping})
}

// Bytes returns the experiment's recording.
func (e Experiment) Bytes() []byte {
	var b bytes.Buffer
	if err := e.Write(&b); err != nil {
		panic(err)
	}
	return b.Bytes()
}

func cpuRows(s *Side, req uint64) []recording.CPURow {
	var rows []recording.CPURow
	for cpu := range 4 {
		t, mhz := "P", s.BzyMHz
		if cpu >= 2 {
			t, mhz = "E", s.BzyMHz*0.7
		}
		rows = append(rows, recording.CPURow{CPU: cpu, Core: cpu, CoreType: t,
			Values: []recording.Value{recording.Value(mhz * 0.9), 90, recording.Value(mhz), 2800, 1.5, 60},
			Regs:   []recording.Reg{{MSR: hwpRequest, Value: req}, {MSR: epbReg, Value: s.EPB}}})
	}
	return rows
}

func summaries(s *Side) []recording.SummaryRow {
	row := func(t string, mhz float64) recording.SummaryRow {
		return recording.SummaryRow{Type: t, CPUs: 2,
			Values:        []recording.Value{recording.Value(mhz * 0.9), 90, recording.Value(mhz), 2800, 1.5, 60},
			PackageValues: []recording.Value{recording.Value(s.Watts), recording.Value(s.Watts / 2), recording.NA(), recording.NA(), recording.NA(), 70}}
	}
	all := row("all", s.BzyMHz*0.85)
	all.CPUs = 4
	return []recording.SummaryRow{row("P", s.BzyMHz), row("E", s.BzyMHz*0.7), all}
}

// runOpts is one run to write.
type runOpts struct {
	id                      int
	start                   int64
	secs                    float64
	warmup, disturb, unheld bool
	sw                      uint64 // Experiment.Switch, 0: none
}

func (e Experiment) writeRun(rw *recording.Writer, s *Side, o runOpts) error {
	id, start, secs := o.id, o.start, o.secs
	rs := recording.RunStart{Run: id, Side: s.Label, Warmup: o.warmup, Settings: s.Settings, Command: []string{"make", "-j4"}, TimeNs: start}
	if e.Checked {
		h := &recording.Held{TimeNs: start - 2e6}
		for cpu := range 4 {
			h.Regs = append(h.Regs, recording.HeldReg{CPU: cpu, Reg: recording.Reg{MSR: hwpRequest, Value: s.Request}},
				recording.HeldReg{CPU: cpu, Reg: recording.Reg{MSR: epbReg, Value: s.EPB}})
		}
		if o.unheld {
			h.Unheld = []recording.Unheld{{CPU: 0, Name: "energy_performance_preference", Want: "performance", Got: "balance_power"}}
		}
		rs.Held = h
	}
	// The switch to the side's settings, just before the run.
	events := []recording.TraceEvent{
		{TimeNs: start - 1e7, CPU: 0, PID: 100, Comm: "hwpprobe", MSR: hwpRequest, Value: s.Request},
		{TimeNs: start - 1e7, CPU: 2, PID: 100, Comm: "hwpprobe", MSR: hwpRequest, Value: s.Request}}
	if o.sw != 0 {
		events = append(events, recording.TraceEvent{TimeNs: start + 1e6, CPU: 0, PID: 900, Comm: "sh", MSR: hwpRequest,
			Value: o.sw, Emulated: e.SwitchEmulated, Old: s.Request})
	}
	recs := []recording.Record{rs, recording.Trace{Run: id, Events: events}}
	var samples []recording.Sample
	for k := int64(1); k <= int64(secs); k++ {
		req := s.Request
		if o.disturb && k > int64(secs)/2 {
			req = Request(0x04, 0x30, 0, 128)
		}
		rows := cpuRows(s, req)
		if o.sw != 0 {
			rows[0].Regs[0].Value = o.sw
		}
		samples = append(samples, recording.Sample{TimeNs: start + k*1e9, IntervalNs: 1e9, CPUs: rows,
			Packages:  []recording.PackageRow{{Package: 0, Values: []recording.Value{recording.Value(s.Watts), recording.Value(s.Watts / 2), recording.NA(), recording.NA(), recording.NA(), 70}, Regs: []recording.Reg{{MSR: hwp.MSR_CORE_PERF_LIMIT_REASONS, Value: uint64(k%2) << 10}}}},
			Summaries: summaries(s)})
	}
	batch := recording.Samples{Run: id, CPUColumns: recording.SamplerCPUColumns(), PackageColumns: recording.SamplerPackageColumns(), Samples: samples}
	if !e.TraceFirst {
		recs = append(recs, batch)
	}
	if o.disturb {
		recs = append(recs, recording.Trace{Run: id, Events: []recording.TraceEvent{
			{TimeNs: start + int64(secs/2*1e9), CPU: 0, PID: 777, Comm: "thermald", MSR: hwpRequest, Value: Request(0x04, 0x30, 0, 128)}}})
	}
	if e.TraceFirst {
		recs = append(recs, batch)
	}
	recs = append(recs, recording.RunEnd{Run: id, TimeNs: start + int64(secs*1e9)})
	for _, r := range recs {
		if err := rw.Write(r); err != nil {
			return fmt.Errorf("run %d: %w", id, err)
		}
	}
	return nil
}

// Seed is the seed report's experiment with four runs a side: A the
// performance governor, B powersave with EPP performance.
func Seed() Experiment {
	return Experiment{
		A: Side{Label: "A", Settings: []recording.Setting{{Name: "scaling_governor", Value: "performance"}},
			Request: Performance, EPB: 0, Seconds: []float64{330.96, 335.10, 334.36, 332.5}, Watts: 28, BzyMHz: 3100},
		B: Side{Label: "B", Settings: []recording.Setting{{Name: "scaling_governor", Value: "powersave"}, {Name: "energy_performance_preference", Value: "performance"}},
			Request: PowersaveEPPPerformance, EPB: 0, Seconds: []float64{257.89, 258.30, 257.94, 259.1}, Watts: 24, BzyMHz: 3600},
	}
}
