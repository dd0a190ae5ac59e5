// SPDX-License-Identifier: Apache-2.0

package sampler

import (
	"errors"
	"fmt"
	"time"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/kernel/topology"
)

// ErrNoCPUs is returned by New for a Reader without CPUs.
var ErrNoCPUs = errors.New("no CPUs to sample")

// Sampler computes turbostat's figures from successive readings of a
// Reader. It is not safe for concurrent use.
type Sampler struct {
	r         Reader
	setup     *Setup
	prev, cur Raw
	prevT     time.Time
	now       func() time.Time
	seq       uint64

	// types lists the summary rows' core types (present hybrid types
	// in P, E, LP-E order, then topology.All); typeRow maps each CPU to
	// its type row (-1: none).
	types   []topology.CoreType
	typeRow []int
	acc     []accum
}

// accum sums a summary row's counters.
type accum struct {
	n                        int
	aperf, mperf, tsc, instr float64
	tscOnly, tscOnlyN        float64 // TSC sum and count of CPUs with a TSC but no APERF/MPERF
	mux                      bool
	maxTmp                   float64
	haveTmp                  bool
}

// Option configures a Sampler.
type Option func(*Sampler)

// WithClock replaces time.Now (tests: a fake clock). The clock's
// differences are the sampling intervals.
func WithClock(now func() time.Time) Option { return func(s *Sampler) { s.now = now } }

// New returns a Sampler over r and takes the baseline reading: the first
// Sample covers the time from New to that call.
func New(r Reader, opts ...Option) (*Sampler, error) {
	st := r.Setup()
	if len(st.CPUs) == 0 {
		return nil, ErrNoCPUs
	}
	s := &Sampler{r: r, setup: st, now: time.Now, prev: NewRaw(st), cur: NewRaw(st)}
	for _, o := range opts {
		o(s)
	}
	present := map[topology.CoreType]bool{}
	for _, c := range st.CPUs {
		present[c.Type] = true
	}
	for _, t := range []topology.CoreType{topology.PCore, topology.ECore, topology.LPECore} {
		if present[t] {
			s.types = append(s.types, t)
		}
	}
	s.typeRow = make([]int, len(st.CPUs))
	for i, c := range st.CPUs {
		s.typeRow[i] = -1
		for j, t := range s.types {
			if c.Type == t {
				s.typeRow[i] = j
			}
		}
	}
	s.types = append(s.types, topology.All)
	s.acc = make([]accum, len(s.types))
	if err := r.Read(&s.prev); err != nil {
		return nil, fmt.Errorf("baseline reading: %w", err)
	}
	s.prevT = countersTime(&s.prev, s.now())
	return s, nil
}

// countersTime returns the moment a reading's counters show: the mean of
// the times the Reader gave the CPUs' counter reads, or (untimed) now,
// the clock after the reading. Every CPU's figures are over the interval
// between two such moments: one interval for all, as turbostat's, so
// that counts over consecutive samples add up to the count over their
// span.
func countersTime(r *Raw, now time.Time) time.Time {
	var sum time.Duration
	n := 0
	for i := range r.CPU {
		if t := r.CPU[i].Time; !t.IsZero() {
			sum += t.Sub(now)
			n++
		}
	}
	if n == 0 {
		return now
	}
	return now.Add(sum / time.Duration(n))
}

// Setup returns the Reader's setup.
func (s *Sampler) Setup() *Setup { return s.setup }

// Sample reads the counters and fills dst with the figures over the
// interval since the previous reading. dst's slices are reused; once they
// have grown to size, Sample does not allocate.
func (s *Sampler) Sample(dst *Sample) error {
	if err := s.r.Read(&s.cur); err != nil {
		return err
	}
	t := countersTime(&s.cur, s.now())
	interval := t.Sub(s.prevT)
	if interval <= 0 {
		return fmt.Errorf("sample interval %v is not positive", interval)
	}
	s.seq++
	dst.Seq = s.seq
	dst.Time = t
	dst.Interval = interval
	s.compute(dst, interval.Seconds())
	s.prev, s.cur = s.cur, s.prev
	s.prevT = t
	return nil
}

func resize[T any](sl []T, n int) []T {
	if cap(sl) < n {
		return make([]T, n)
	}
	return sl[:n]
}

func (s *Sampler) compute(dst *Sample, dt float64) {
	st := s.setup
	dst.CPUs = resize(dst.CPUs, len(st.CPUs))
	dst.Packages = resize(dst.Packages, len(st.Packages))
	dst.Summaries = resize(dst.Summaries, len(s.types))
	for i := range s.acc {
		s.acc[i] = accum{}
	}
	all := &s.acc[len(s.acc)-1]
	for i := range st.CPUs {
		c := &dst.CPUs[i]
		s.cpu(c, i, dt)
		if s.typeRow[i] >= 0 {
			s.add(&s.acc[s.typeRow[i]], c)
		}
		s.add(all, c)
	}
	for i := range st.Packages {
		s.pkg(&dst.Packages[i], i, dt)
	}
	for j, t := range s.types {
		s.summary(&dst.Summaries[j], t, &s.acc[j], dt, dst.Packages)
	}
}

// perfScale returns the multiplex factor of a CPU's perf group over the
// interval: ΔEnabled/ΔRunning (perf stat's scaling), whether it applies,
// and ok=false when the group never ran.
func perfScale(p, c *RawCPU) (scale float64, mux, ok bool) {
	de, dr := c.Enabled-p.Enabled, c.Running-p.Running
	switch {
	case dr == 0 && de > 0:
		return 0, false, false
	case dr >= de:
		return 1, false, true
	}
	return float64(de) / float64(dr), true, true
}

// cpu computes one CPU's figures with turbostat's formulas
// (tools/power/x86/turbostat/turbostat.c, format_counters(), v2024+):
//
//	Avg_MHz = 1.0 / units * t->aperf / interval_float
//	Busy%   = 100.0 * t->mperf / tsc
//	Bzy_MHz = tsc / units * t->aperf / t->mperf / interval_float
//	TSC_MHz = 1.0 * t->tsc / units / interval_float
//	IPC     = 1.0 * t->instr_count / t->aperf
//
// with units = 1e6 and the counts being deltas over the interval.
// turbostat prints Bzy_MHz as base_hz / units * aperf / mperf when it
// knows the base frequency (has_base_hz); on parts whose TSC runs at the
// base frequency the two agree, and the TSC form needs no model table.
// CoreTmp is tj_max - ((IA32_THERM_STATUS >> 16) & 0x7F), as turbostat.
func (s *Sampler) cpu(c *CPU, i int, dt float64) {
	st := s.setup
	p, r := &s.prev.CPU[i], &s.cur.CPU[i]
	topo := st.CPUs[i]
	*c = CPU{CPU: topo.CPU, Package: topo.Package, Core: topo.Core, Type: topo.Type}
	bad := r.Bad | p.Bad

	perfOK := bad&BadPerf == 0
	scale, mux, ran := perfScale(p, r)
	perfOK = perfOK && ran
	var pflag Flag
	if mux {
		pflag = FlagMultiplexed
	}
	// count returns a delta of a counter from src, scaled when perf.
	count := func(src Source, prev, cur uint64) (float64, Flag, bool) {
		switch src {
		case SrcNone:
			return 0, 0, false
		case SrcPerf:
			if !perfOK {
				return 0, 0, false
			}
			return float64(cur-prev) * scale, pflag, true
		}
		return float64(cur - prev), 0, true
	}
	cntOK := bad&BadCounters == 0
	aperf, af, okA := count(st.Counters, p.APERF, r.APERF)
	mperf, _, okM := count(st.Counters, p.MPERF, r.MPERF)
	tsc, tf, okT := count(st.TSC, p.TSC, r.TSC)
	okA, okM = okA && cntOK, okM && cntOK
	if st.TSC != SrcPerf {
		okT = okT && cntOK
	}
	c.Counts = Counts{APERF: uint64(aperf), MPERF: uint64(mperf), TSC: uint64(tsc)}
	if okA {
		c.AvgMHz = Value{V: aperf / 1e6 / dt, Src: st.Counters, Flags: af}
	}
	if okT {
		c.TSCMHz = Value{V: tsc / 1e6 / dt, Src: st.TSC, Flags: tf}
	}
	if okM && okT && tsc > 0 {
		c.BusyPct = Value{V: 100 * mperf / tsc, Src: st.Counters, Flags: af}
	}
	if okA && okM && okT && mperf > 0 {
		c.BzyMHz = Value{V: tsc / 1e6 * aperf / mperf / dt, Src: st.Counters, Flags: af}
	}
	instr, inf, okI := count(st.Instructions, p.Instructions, r.Instructions)
	cycles, _, okC := count(st.Cycles, p.Cycles, r.Cycles)
	ref, _, _ := count(st.RefCycles, p.RefCycles, r.RefCycles)
	c.Counts.Instructions, c.Counts.Cycles, c.Counts.RefCycles = uint64(instr), uint64(cycles), uint64(ref)
	switch {
	case okI && okA && aperf > 0:
		c.IPC = Value{V: instr / aperf, Src: st.Instructions, Flags: inf | af}
	case okI && okC && cycles > 0:
		c.IPC = Value{V: instr / cycles, Src: st.Instructions, Flags: inf}
	}
	if st.CoreTmp != SrcNone && bad&BadTherm == 0 {
		c.CoreTmp = Value{V: st.TjMax[i] - float64(hwp.DecodeThermStatus(r.ThermStatus).Readout), Src: st.CoreTmp}
	}
	if st.HWPRequest != SrcNone && r.Bad&BadHWP == 0 {
		c.HWPRequest = reg(r.HWPRequest, p.HWPRequest, st.HWPRequest, p.Bad&BadHWP == 0)
	}
	if st.EPB != SrcNone && r.Bad&BadEPB == 0 {
		c.EPB = reg(r.EPB, p.EPB, st.EPB, p.Bad&BadEPB == 0)
	}
	if st.HWPStatus != SrcNone && r.Bad&BadHWPStatus == 0 {
		c.HWPStatus = reg(r.HWPStatus, p.HWPStatus, st.HWPStatus, p.Bad&BadHWPStatus == 0)
	}
	c.Regs = addrRegs(st.CPURegs, p.Regs, r.Regs)
}

// pkg computes one package's figures. Watts are turbostat's
// p->energy_pkg * rapl_energy_units / interval_float, the energy delta
// taken modulo the counter's wrap (the 32-bit RAPL MSRs wrap; turbostat's
// DELTA_WRAP32).
func (s *Sampler) pkg(pk *Package, i int, dt float64) {
	st := s.setup
	p, r := &s.prev.Pkg[i], &s.cur.Pkg[i]
	*pk = Package{Package: st.Packages[i]}
	bad := p.Bad | r.Bad
	for d := range NumDomains {
		ec := st.Energy[d]
		if ec.Src == SrcNone || bad&BadEnergy != 0 {
			continue
		}
		delta := r.Energy[d] - p.Energy[d]
		var f Flag
		if ec.Modulus != 0 && r.Energy[d] < p.Energy[d] {
			delta = r.Energy[d] + ec.Modulus - p.Energy[d]
			f |= FlagWrapped
		}
		if delta == 0 {
			f |= FlagReadsZero
		}
		v := Value{V: float64(delta) * ec.Unit / dt, Src: ec.Src, Flags: f}
		switch d {
		case DomPkg:
			pk.PkgWatt = v
		case DomCores:
			pk.CorWatt = v
		case DomGFX:
			pk.GFXWatt = v
		case DomRAM:
			pk.RAMWatt = v
		case DomPsys:
			pk.SysWatt = v
		}
	}
	if st.PkgTmp != SrcNone && r.Bad&BadTherm == 0 {
		pk.PkgTmp = Value{V: st.PkgTjMax[i] - float64(hwp.DecodeThermStatus(r.ThermStatus).Readout), Src: st.PkgTmp}
		pk.ThermStatus = reg(r.ThermStatus, p.ThermStatus, st.PkgTmp, p.Bad&BadTherm == 0)
	}
	if st.LimitReasons != SrcNone && r.Bad&BadLimit == 0 {
		pk.LimitReasons = reg(r.LimitReasons, p.LimitReasons, st.LimitReasons, p.Bad&BadLimit == 0)
	}
	if st.PowerLimit != SrcNone && r.Bad&BadPowerLimit == 0 {
		pk.PowerLimit = reg(r.PowerLimit, p.PowerLimit, st.PowerLimit, p.Bad&BadPowerLimit == 0)
	}
	pk.Regs = addrRegs(st.PkgRegs, p.Regs, r.Regs)
}

// addrRegs builds the figures of the registers at addrs that were read.
func addrRegs(addrs []uint32, prev, cur RawRegs) []AddrReg {
	var out []AddrReg
	for j, a := range addrs {
		if cur.OK[j] {
			out = append(out, AddrReg{MSR: a, Reg: reg(cur.V[j], prev.V[j], SrcMSR, prev.OK[j])})
		}
	}
	return out
}

// reg builds a register figure; the change is known only when the
// previous reading succeeded.
func reg(cur, prev uint64, src Source, prevOK bool) Reg {
	r := Reg{Raw: cur, Src: src}
	if prevOK && cur != prev {
		r.Changed, r.Prev = true, prev
	}
	return r
}

// add accumulates a CPU's counts into a summary row, as turbostat's
// sum_counters(): a CPU whose APERF, MPERF and TSC were read counts in the
// frequency sums and in the divisor, also when it was idle for the whole
// interval (MPERF did not advance, so it has no Bzy_MHz of its own); a CPU
// whose counters could not be read is in neither.
func (s *Sampler) add(a *accum, c *CPU) {
	switch {
	case c.AvgMHz.Src != SrcNone && c.TSCMHz.Src != SrcNone:
		a.n++
		a.aperf += float64(c.Counts.APERF)
		a.mperf += float64(c.Counts.MPERF)
		a.tsc += float64(c.Counts.TSC)
		a.mux = a.mux || c.AvgMHz.Flags&FlagMultiplexed != 0
		if c.IPC.Src != SrcNone {
			a.instr += float64(c.Counts.Instructions)
		}
	case c.TSCMHz.Src != SrcNone:
		// TSC without APERF/MPERF (perf msr PMU with tsc only).
		a.tscOnly += float64(c.Counts.TSC)
		a.tscOnlyN++
	}
	if c.CoreTmp.Src != SrcNone && (!a.haveTmp || c.CoreTmp.V > a.maxTmp) {
		a.maxTmp, a.haveTmp = c.CoreTmp.V, true
	}
}

// summary fills one summary row as turbostat's: it sums the threads'
// deltas and divides by the number of CPUs (compute_average()), then
// applies the per-CPU formulas to the averages; so Busy% and Bzy_MHz are
// ratios of sums and Avg_MHz and TSC_MHz are means. Watts and PkgTmp
// appear in the topology.All row only (sum and maximum over packages).
func (s *Sampler) summary(sm *Summary, t topology.CoreType, a *accum, dt float64, pkgs []Package) {
	st := s.setup
	*sm = Summary{Type: t}
	for i := range st.CPUs {
		if t == topology.All || st.CPUs[i].Type == t {
			sm.CPUs++
		}
	}
	var f Flag
	if a.mux {
		f = FlagMultiplexed
	}
	if a.n > 0 {
		n := float64(a.n)
		sm.AvgMHz = Value{V: a.aperf / n / 1e6 / dt, Src: st.Counters, Flags: f}
		sm.TSCMHz = Value{V: a.tsc / n / 1e6 / dt, Src: st.TSC, Flags: f}
		if a.tsc > 0 {
			sm.BusyPct = Value{V: 100 * a.mperf / a.tsc, Src: st.Counters, Flags: f}
		}
		if a.mperf > 0 {
			sm.BzyMHz = Value{V: a.tsc / n / 1e6 * a.aperf / a.mperf / dt, Src: st.Counters, Flags: f}
		}
		if st.Instructions != SrcNone && a.aperf > 0 && a.instr > 0 {
			sm.IPC = Value{V: a.instr / a.aperf, Src: st.Instructions, Flags: f}
		}
	} else if a.tscOnlyN > 0 {
		sm.TSCMHz = Value{V: a.tscOnly / a.tscOnlyN / 1e6 / dt, Src: st.TSC}
	}
	if a.haveTmp {
		sm.CoreTmp = Value{V: a.maxTmp, Src: st.CoreTmp}
	}
	if t != topology.All {
		return
	}
	sum := func(get func(*Package) Value) Value {
		var out Value
		for i := range pkgs {
			v := get(&pkgs[i])
			if v.Src == SrcNone {
				continue
			}
			out.V += v.V
			out.Src = v.Src
			out.Flags |= v.Flags
		}
		if out.V != 0 {
			out.Flags &^= FlagReadsZero
		}
		return out
	}
	sm.PkgWatt = sum(func(p *Package) Value { return p.PkgWatt })
	sm.CorWatt = sum(func(p *Package) Value { return p.CorWatt })
	sm.GFXWatt = sum(func(p *Package) Value { return p.GFXWatt })
	sm.RAMWatt = sum(func(p *Package) Value { return p.RAMWatt })
	sm.SysWatt = sum(func(p *Package) Value { return p.SysWatt })
	for i := range pkgs {
		if v := pkgs[i].PkgTmp; v.Src != SrcNone && (sm.PkgTmp.Src == SrcNone || v.V > sm.PkgTmp.V) {
			sm.PkgTmp = v
		}
	}
}
