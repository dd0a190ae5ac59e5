// SPDX-License-Identifier: Apache-2.0

// Package synth writes synthetic recordings for benchmarks: the records
// `hwpprobe record` writes (meta, run start, snapshots, one-second sample
// batches, trace batches, process counters, run end, end), for any number
// of CPUs, with figures that vary from sample to sample and CPU to CPU as
// measured ones do (each CPU's busy share and frequency wander, the TSC
// rate jitters with the measured interval, temperatures move by degrees,
// registers change now and then).
package synth

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/machine/regs"
)

// hwpRequest and epbReg are the Intel request and EPB registers' addresses.
var (
	hwpRequest = regs.RequestOf(regs.Intel).Address
	epbReg     = regs.EPB().Address
)

// Config describes a recording.
type Config struct {
	CPUs    int     // logical CPUs sampled
	Hz      float64 // samples per second
	Seconds int     // length of the run
	Seed    uint64
	// Unrounded keeps every digit of the figures, as format 1.0's
	// writer stored them, instead of rounding them as record does
	// (recording.FigureDecimals).
	Unrounded bool
	// TracePerSecond is how many kernel MSR writes a second the trace
	// holds.
	TracePerSecond int
}

// Start is the run's start time (Unix ns): fixed, so that files are
// reproducible.
const Start = int64(1_800_000_000_000_000_000)

// Write writes the recording c describes to w.
func Write(w io.Writer, c Config) error {
	rw, err := recording.NewWriter(w, Meta(c))
	if err != nil {
		return err
	}
	g := New(c)
	if err := rw.Write(g.RunStart()); err != nil {
		return err
	}
	for s := range c.Seconds {
		if err := rw.Write(g.Batch()); err != nil {
			return err
		}
		if err := rw.Write(g.Trace(s)); err != nil {
			return err
		}
	}
	end := Start + int64(c.Seconds)*1e9
	for _, r := range []recording.Record{
		recording.Process{Run: 1, PID: 4242, Counts: []recording.Count{{Event: "task-clock", Supported: true, Value: uint64(c.Seconds) * 1e9, EnabledNs: 1, RunningNs: 1}}},
		recording.RunEnd{Run: 1, TimeNs: end},
	} {
		if err := rw.Write(r); err != nil {
			return err
		}
	}
	return rw.Close(recording.End{TimeNs: end, Status: recording.StatusComplete})
}

// Meta returns the file's metadata.
func Meta(c Config) recording.Meta {
	return recording.Meta{Tool: "hwpprobe", ToolVersion: "synth", Kind: "record", TimeNs: Start,
		CommandLine: []string{"hwpprobe", "record", "-o", "synth.rec", "--", "make"},
		IntervalNs:  int64(1e9 / c.Hz), CPUs: fmt.Sprintf("0-%d", c.CPUs-1),
		Host: recording.Host{Hostname: "synth", Kernel: "6.18.0", Arch: "x86_64", Vendor: "GenuineIntel",
			CPUModel: fmt.Sprintf("synthetic %d-CPU machine", c.CPUs), Family: 6, Model: 0x8f,
			OnlineCPU: fmt.Sprintf("0-%d", c.CPUs-1), Driver: "intel_pstate"}}
}

// Gen generates a run's batches one after the other.
type Gen struct {
	c      Config
	r      *rand.Rand
	cpu    []cpuState
	pkgs   int
	types  []string // core type per CPU
	sample int
}

type cpuState struct {
	busy, mhz, ipc, tmp float64
	hwp                 uint64
}

// New returns a generator for c.
func New(c Config) *Gen {
	g := &Gen{c: c, r: rand.New(rand.NewPCG(c.Seed, 1)), cpu: make([]cpuState, c.CPUs), types: make([]string, c.CPUs)}
	g.pkgs = max(1, (c.CPUs+255)/256)
	for i := range g.cpu {
		g.cpu[i] = cpuState{busy: g.r.Float64() * 100, mhz: 800 + g.r.Float64()*3000, ipc: 0.5 + g.r.Float64()*2,
			tmp: 45 + float64(g.r.IntN(20)), hwp: 0x80002e17}
		if c.CPUs <= 16 { // a hybrid laptop part: P, E, LP-E
			g.types[i] = map[bool]string{true: "P", false: "E"}[i < 4]
			if i >= c.CPUs-2 {
				g.types[i] = "LP-E"
			}
		}
	}
	return g
}

// RunStart returns the run's start record.
func (g *Gen) RunStart() recording.RunStart {
	return recording.RunStart{Run: 1, Command: []string{"make"}, TimeNs: Start,
		Figures: &recording.Figures{Sources: map[string]string{"Avg_MHz": "perf", "PkgWatt": "powercap"}}}
}

// Batch returns the next second of samples.
func (g *Gen) Batch() recording.Samples {
	b := recording.Samples{Run: 1, CPUColumns: recording.SamplerCPUColumns(), PackageColumns: recording.SamplerPackageColumns()}
	for range int(g.c.Hz) {
		b.Samples = append(b.Samples, g.next())
	}
	return b
}

func (g *Gen) next() recording.Sample {
	g.sample++
	iv := int64(1e9/g.c.Hz) + int64(g.r.IntN(400_000)) - 200_000
	s := recording.Sample{TimeNs: Start + int64(float64(g.sample)*1e9/g.c.Hz), IntervalNs: iv}
	tsc := 1700 * (1 + g.r.NormFloat64()*2e-6) // the TSC rate over a measured interval
	var sumBusy, sumAvg float64
	for i := range g.cpu {
		st := &g.cpu[i]
		st.busy = clamp(st.busy+g.r.NormFloat64()*8, 0, 100)
		st.mhz = clamp(st.mhz+g.r.NormFloat64()*150, 400, 4800)
		st.ipc = clamp(st.ipc+g.r.NormFloat64()*0.1, 0.1, 4)
		st.tmp = clamp(st.tmp+float64(g.r.IntN(3)-1), 35, 100)
		if g.r.IntN(5000) == 0 {
			st.hwp ^= 0x80 << 24 // EPP moves between 0x80 and 0x00
		}
		avg := st.mhz * st.busy / 100
		sumBusy, sumAvg = sumBusy+st.busy, sumAvg+avg
		s.CPUs = append(s.CPUs, recording.CPURow{CPU: i, Core: i / 2, Package: i * g.pkgs / len(g.cpu), CoreType: g.types[i],
			Values: g.round(recording.SamplerCPUColumns(), avg, st.busy, st.mhz, tsc, st.ipc, st.tmp),
			Regs:   []recording.Reg{{MSR: hwpRequest, Value: st.hwp}, {MSR: epbReg, Value: 6}}})
	}
	na := math.NaN()
	var watts float64
	for p := range g.pkgs {
		w := 10 + sumBusy/float64(len(g.cpu))*2 + g.r.NormFloat64()
		watts += w
		s.Packages = append(s.Packages, recording.PackageRow{Package: p,
			Values: g.round(recording.SamplerPackageColumns(), w, w*0.7, na, w*0.1, na, float64(55+g.r.IntN(10))),
			Regs:   []recording.Reg{{MSR: 0x64f, Value: 0x1c000000}, {MSR: 0x1b1, Value: 0x88370000}}})
	}
	n := float64(len(g.cpu))
	s.Summaries = []recording.SummaryRow{{Type: "all", CPUs: len(g.cpu),
		Values:        g.round(recording.SamplerCPUColumns(), sumAvg/n, sumBusy/n, sumAvg/sumBusy*100, tsc, 1.5, 80),
		PackageValues: g.round(recording.SamplerPackageColumns(), watts, watts*0.7, na, watts*0.1, na, 64)}}
	return s
}

// round returns the figures as recorded: rounded to their decimals
// unless the configuration asks for every digit; NaN is not available.
func (g *Gen) round(cols []string, v ...float64) []recording.Value {
	out := make([]recording.Value, len(v))
	for i, x := range v {
		out[i] = recording.Value(x)
		if math.IsNaN(x) {
			out[i] = recording.NA()
		} else if d, ok := recording.FigureDecimals(cols[i]); ok && !g.c.Unrounded {
			out[i] = out[i].Round(d)
		}
	}
	return out
}

func clamp(v, lo, hi float64) float64 { return min(max(v, lo), hi) }

// Trace returns second s's kernel MSR writes.
func (g *Gen) Trace(s int) recording.Trace {
	t := recording.Trace{Run: 1}
	for i := range g.c.TracePerSecond {
		cpu := g.r.IntN(g.c.CPUs)
		t.Events = append(t.Events, recording.TraceEvent{TimeNs: Start + int64(s)*1e9 + int64(i)*1e9/int64(g.c.TracePerSecond),
			CPU: cpu, PID: 100 + cpu, Comm: fmt.Sprintf("kworker/%d:1", cpu), MSR: hwpRequest, Value: g.cpu[cpu].hwp})
	}
	return t
}

// Inflate decompresses every zstd frame of the recording at path and
// decodes nothing (recording.Inflate): what reading it costs at least.
func Inflate(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = recording.Inflate(f)
	return err
}
