// SPDX-License-Identifier: Apache-2.0

package analysis

import (
	"encoding/json"
	"maps"
	"math"
	"slices"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/files/recording/summary"
	"github.com/hwpprobe/hwpprobe/internal/kernel/topology"
	"github.com/hwpprobe/hwpprobe/internal/machine/snapshot"
	"github.com/hwpprobe/hwpprobe/rapl"
)

// RunFacts is what one run's samples, snapshots and traced writes show
// about the hardware, run by run, so that what separates the sides is
// seen in each run and not only in shares over a side (docs/diff.md,
// "Per-run evidence").
type RunFacts struct {
	// ExcursionEdges counts, per core type ("all" on a machine that is
	// not hybrid), the Excursion_To_Minimum bits (IA32_HWP_STATUS bit 2)
	// newly set during the run: each 0 -> 1 change of a CPU's bit from
	// one reading to the next, the readings being the snapshot before
	// the run, every sample, and the snapshot after. nil when HWP_STATUS
	// was not read.
	ExcursionEdges map[string]int `json:"excursion_edges"`
	// LimitSeconds are the seconds (the sum of the measured intervals of
	// the samples) during which each limit reason of
	// MSR_CORE_PERF_LIMIT_REASONS was active in some package; nil when
	// the register was not sampled.
	LimitSeconds map[string]float64 `json:"limit_seconds"`
	// SampledSeconds is the sum of the samples' intervals.
	SampledSeconds float64 `json:"sampled_seconds"`
	// Power is the run's mean power: the package, its cores, its
	// graphics, the rest of the package (uncore and SoC: package minus
	// cores minus graphics) and the platform (psys); NaN where not
	// measured.
	Power Power `json:"power"`
	// Parallel and Serial are the Bzy_MHz of each core type in the
	// samples with more than half the CPUs busy and with at most one
	// busy (PhaseOf).
	Parallel Phase `json:"parallel"`
	Serial   Phase `json:"serial"`
	// Limits are the package power limits in force over the run: each
	// source's (MSR_PKG_POWER_LIMIT and every powercap zone) in the
	// snapshot before, each traced write of MSR_PKG_POWER_LIMIT, each
	// sampled change of it, each source's in the snapshot after.
	Limits []LimitStep `json:"power_limits"`
	// PL2Seconds is the time the run spent inside the PL2 window
	// (PL2Window); NaN when PL1 or the package power is not known.
	PL2Seconds float64 `json:"pl2_window_seconds"`
	// PL2Share is PL2Seconds over SampledSeconds.
	PL2Share float64 `json:"pl2_window_share"`
	// levelKHz is, per core type, the kHz one HWP performance level stands
	// for (LevelKHz) from the snapshot before the run; 0 where unknown or
	// where the type's CPUs disagree.
	levelKHz map[string]int64
}

// Power is a run's mean power by domain, in watts (NaN: not measured).
type Power struct {
	Package  float64 `json:"package"`
	Cores    float64 `json:"cores"`
	Graphics float64 `json:"graphics"`
	Rest     float64 `json:"rest"`
	Psys     float64 `json:"psys"`
}

// Phase is the delivered frequency of each core type in one kind of
// phase: Bzy_MHz weighted by busy time as turbostat's summary weights it,
// over the samples of the phase, and their seconds.
type Phase struct {
	Seconds float64            `json:"seconds"`
	BzyMHz  map[string]float64 `json:"bzy_mhz"` // core type -> MHz
}

// LimitStep is PL1 and PL2 as one source held them from T (seconds from
// the run's start; negative: read before it) on.
type LimitStep struct {
	T float64 `json:"t"`
	// Source is "MSR_PKG_POWER_LIMIT" or a powercap zone
	// ("intel-rapl:0", "intel-rapl-mmio:0").
	Source string `json:"source"`
	// How: "before" and "after" (the snapshots), "write" (traced) or
	// "sampled" (a sample read a value other than the reading before).
	How      string  `json:"how"`
	PL1W     float64 `json:"pl1_w"`
	PL1TimeS float64 `json:"pl1_time_s"`
	PL2W     float64 `json:"pl2_w"`
}

// Phases of PhaseOf.
const (
	PhaseOther    = 0
	PhaseParallel = 1
	PhaseSerial   = 2
)

// PhaseOf classifies a sample by how many of its cpus CPUs were busy,
// busy being the whole machine's Busy% times its CPUs (the sum of the
// CPUs' busy shares): parallel when more than half the CPUs were busy,
// serial when at most one was, neither in between.
func PhaseOf(busyPct float64, cpus int) int {
	busy := busyPct / 100 * float64(cpus)
	switch {
	case busy > float64(cpus)/2:
		return PhaseParallel
	case busy <= 1:
		return PhaseSerial
	}
	return PhaseOther
}

// PL1Margin is how far above PL1 a sample's mean package power must be
// to count as drawn inside the PL2 window (PL2Window): the PL1 control
// holds the average at PL1, not every interval below it.
const PL1Margin = 0.05

// PL2Window returns the seconds of the samples (interval dt[i], mean
// package power p[i]) spent inside the PL2 window of a package whose PL1
// is pl1 W: the time after the package rose above PL1 until the PL1
// average catches up. RAPL's PL1 control keeps an exponentially weighted
// average of package power with PL1's time window as time constant
// (docs/emulator.md, "Power limits"): once the average has reached PL1
// the package is held at PL1, so a package drawing more than PL1 is
// inside the window, its average not yet caught up. The window is
// measured that way, as the samples above PL1 by more than PL1Margin,
// without guessing the average's value at the run's start (the history
// before the run is not recorded). NaN without PL1 or samples.
func PL2Window(dt, p []float64, pl1 float64) float64 {
	if len(p) == 0 || !(pl1 > 0) {
		return math.NaN()
	}
	in := 0.0
	for i := range p {
		if p[i] > pl1*(1+PL1Margin) {
			in += dt[i]
		}
	}
	return in
}

// factScan gathers a run's RunFacts as its records come.
type factScan struct {
	start   int64
	status  map[int]bool   // CPU -> Excursion_To_Minimum at its last reading
	typeOf  map[int]string // CPU -> core type
	edges   map[string]int // core type -> new excursions
	limits  map[string]float64
	limitOK bool
	seconds float64
	phases  [3]phaseAcc
	dt, pw  []float64 // each sample's interval and package power
	units   *uint64   // MSR_RAPL_POWER_UNIT from the snapshot before
	pl1     float64   // PL1 from the snapshot before
	steps   []LimitStep
	levels  map[string]int64 // core type -> kHz per HWP level (RunFacts.levelKHz)
	// limitRaw is MSR_PKG_POWER_LIMIT of the first package as last read
	// (the snapshot before, then each sample); limitKnown once read.
	limitRaw   uint64
	limitKnown bool
}

// phaseAcc accumulates one kind of phase.
type phaseAcc struct {
	seconds float64
	bzy     map[string][2]float64 // core type -> (sum of MHz x weight, weight)
}

func newFactScan(start int64) *factScan {
	return &factScan{start: start, typeOf: map[int]string{}, limits: map[string]float64{}}
}

// excursion takes a CPU's reading of its Excursion_To_Minimum bit.
func (f *factScan) excursion(cpu int, set bool) {
	if f.status == nil {
		f.status, f.edges = map[int]bool{}, map[string]int{}
	}
	if was, ok := f.status[cpu]; ok && !was && set {
		f.edges[f.typeOf[cpu]]++
	}
	f.status[cpu] = set
}

// addSamples takes a batch of samples.
func (f *factScan) addSamples(b recording.Samples, host recording.Host) {
	busy, bzy := slices.Index(b.CPUColumns, "Busy%"), slices.Index(b.CPUColumns, "Bzy_MHz")
	pkg := slices.Index(b.PackageColumns, "PkgWatt")
	for i := range b.Samples {
		f.addSample(&b.Samples[i], busy, bzy, pkg, host)
	}
}

// addSample takes one sample: cols are the indexes of Busy% and Bzy_MHz
// in the CPU columns and of PkgWatt in the package columns (-1 absent).
func (f *factScan) addSample(s *recording.Sample, busyCol, bzyCol, pkgCol int, host recording.Host) {
	dt := float64(s.IntervalNs) / 1e9
	f.seconds += dt
	for i := range s.CPUs {
		row := &s.CPUs[i]
		t := row.CoreType
		if t == "" {
			t = string(topology.All)
		}
		f.typeOf[row.CPU] = t
		if v, ok := row.Reg(hwp.MSR_IA32_HWP_STATUS); ok {
			f.excursion(row.CPU, hwp.DecodeStatus(v).ExcursionMin)
		}
	}
	if len(s.Packages) > 0 {
		if v, ok := s.Packages[0].Reg(rapl.MSR_PKG_POWER_LIMIT); ok {
			f.sampledLimit(v, s.TimeNs)
		}
	}
	var active []string
	for _, p := range s.Packages {
		if v, ok := p.Reg(hwp.MSR_CORE_PERF_LIMIT_REASONS); ok {
			f.limitOK = true
			for _, r := range limitReasons(v, host) {
				if !slices.Contains(active, r) {
					active = append(active, r)
				}
			}
		}
	}
	for _, r := range active {
		f.limits[r] += dt
	}
	for i := range s.Summaries {
		r := &s.Summaries[i]
		if r.Type != string(topology.All) {
			continue
		}
		if busy := r.Value(busyCol); busy.Valid() {
			if ph := PhaseOf(float64(busy), r.CPUs); ph != PhaseOther {
				f.phases[ph].add(s.Summaries, busyCol, bzyCol, dt)
			}
		}
		if w := r.PackageValue(pkgCol); w.Valid() {
			f.dt, f.pw = append(f.dt, dt), append(f.pw, float64(w))
		}
	}
}

// add takes a sample's summary rows into the phase.
func (a *phaseAcc) add(rows []recording.SummaryRow, busyCol, bzyCol int, dt float64) {
	a.seconds += dt
	if a.bzy == nil {
		a.bzy = map[string][2]float64{}
	}
	for i := range rows {
		busy, bzy := rows[i].Value(busyCol), rows[i].Value(bzyCol)
		if busy.Valid() && bzy.Valid() && busy > 0 {
			w := float64(busy) * dt
			acc := a.bzy[rows[i].Type]
			a.bzy[rows[i].Type] = [2]float64{acc[0] + float64(bzy)*w, acc[1] + w}
		}
	}
}

func (a phaseAcc) phase() Phase {
	p := Phase{Seconds: a.seconds, BzyMHz: map[string]float64{}}
	for t, acc := range a.bzy {
		p.BzyMHz[t] = acc[0] / acc[1]
	}
	return p
}

// addSnapshot takes a snapshot of the run: the CPUs' HWP_STATUS, and the
// power limits of MSR_PKG_POWER_LIMIT and of every powercap zone of the
// first package. A snapshot that cannot be read gives nothing.
func (f *factScan) addSnapshot(s recording.Snapshot) {
	var snap snapshot.Snapshot
	if json.Unmarshal(s.Data, &snap) != nil {
		return
	}
	for _, g := range snap.Groups {
		for _, c := range g.CPUs {
			if caps := c.Registers.HWPCapabilities; caps != nil && c.Sysfs.CPUInfoMaxKHz != nil && s.Phase == recording.PhaseBefore {
				f.level(coreTypeName(c.CoreType), LevelKHz(caps.Highest, *c.Sysfs.CPUInfoMaxKHz))
			}
			if st := c.Registers.HWPStatus; st != nil {
				if _, ok := f.typeOf[c.CPU]; !ok {
					f.typeOf[c.CPU] = coreTypeName(c.CoreType)
				}
				f.excursion(c.CPU, st.ExcursionMin)
			}
		}
	}
	if len(snap.Packages) == 0 {
		return
	}
	p := snap.Packages[0]
	t := float64(s.TimeNs-f.start) / 1e9
	if p.RAPLUnits != nil && s.Phase == recording.PhaseBefore {
		u := uint64(p.RAPLUnits.Raw)
		f.units = &u
	}
	if l := p.PowerLimit; l != nil {
		if s.Phase == recording.PhaseBefore {
			f.limitRaw, f.limitKnown = uint64(l.Raw), true
		}
		f.steps = append(f.steps, LimitStep{T: t, Source: "MSR_PKG_POWER_LIMIT", How: s.Phase, PL1W: l.PL1W, PL1TimeS: l.PL1TimeS, PL2W: l.PL2W})
		if s.Phase == recording.PhaseBefore && l.PL1Enabled {
			f.pl1 = l.PL1W
		}
	}
	for _, z := range p.Powercap {
		st := LimitStep{T: t, Source: z.Zone, How: s.Phase, PL1W: deref(z.PL1W), PL1TimeS: deref(z.PL1TimeS), PL2W: deref(z.PL2W)}
		f.steps = append(f.steps, st)
		if s.Phase == recording.PhaseBefore && f.pl1 == 0 && z.Interface == "msr" {
			f.pl1 = st.PL1W
		}
	}
}

// level takes one CPU's kHz per level for its core type: a type whose
// CPUs disagree gets 0.
func (f *factScan) level(t string, khz int64) {
	if f.levels == nil {
		f.levels = map[string]int64{}
	}
	if old, ok := f.levels[t]; ok && old != khz {
		khz = 0
	}
	f.levels[t] = khz
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// coreTypeName is a snapshot CPU's core type (topology.CoreType.Long:
// "P-core") as the samples name it ("P"); "all" when not hybrid.
func coreTypeName(t string) string {
	for _, c := range []topology.CoreType{topology.PCore, topology.ECore, topology.LPECore} {
		if t == c.Long() || t == string(c) {
			return string(c)
		}
	}
	return string(topology.All)
}

// addWrite takes a traced write of MSR_PKG_POWER_LIMIT.
func (f *factScan) addWrite(e recording.TraceEvent) { f.limitStep("write", e.Value, e.TimeNs) }

// sampledLimit takes a sampled MSR_PKG_POWER_LIMIT: a step where it
// differs from the reading before (the snapshot's, or the sample's
// before), whoever changed it (a write through MMIO or firmware is not
// traced).
func (f *factScan) sampledLimit(v uint64, timeNs int64) {
	if f.limitKnown && v != f.limitRaw {
		f.limitStep("sampled", v, timeNs)
	}
	f.limitRaw, f.limitKnown = v, true
}

// limitStep adds a step of MSR_PKG_POWER_LIMIT holding v from timeNs on,
// decoded with the units of the snapshot before (the common Intel client
// units without one).
func (f *factScan) limitStep(how string, v uint64, timeNs int64) {
	u := uint64(rapl.DefaultPowerUnitRaw)
	if f.units != nil {
		u = *f.units
	}
	l := rapl.DecodePowerLimit(v, rapl.DecodePowerUnit(u))
	f.steps = append(f.steps, LimitStep{T: float64(timeNs-f.start) / 1e9, Source: "MSR_PKG_POWER_LIMIT", How: how,
		PL1W: l.PL1.Power, PL1TimeS: l.PL1.Window, PL2W: l.PL2.Power})
}

// facts condenses the run, its mean power from its summary's machine row.
func (f *factScan) facts(sum summary.Summary) RunFacts {
	rf := RunFacts{SampledSeconds: f.seconds, Parallel: f.phases[PhaseParallel].phase(), Serial: f.phases[PhaseSerial].phase(),
		Limits: slices.Clone(f.steps), levelKHz: f.levels, PL2Seconds: PL2Window(f.dt, f.pw, f.pl1), PL2Share: math.NaN(),
		Power: Power{Package: math.NaN(), Cores: math.NaN(), Graphics: math.NaN(), Rest: math.NaN(), Psys: math.NaN()}}
	if f.status != nil {
		rf.ExcursionEdges = maps.Clone(f.edges)
	}
	if f.limitOK {
		rf.LimitSeconds = maps.Clone(f.limits)
	}
	if f.seconds > 0 {
		rf.PL2Share = rf.PL2Seconds / f.seconds
	}
	if n := len(sum.Rows); n > 0 && sum.Rows[n-1].Type == string(topology.All) {
		r := sum.Rows[n-1]
		w := func(d string) float64 {
			if v := r.Watt(d); v.Valid() {
				return float64(v)
			}
			return math.NaN()
		}
		rf.Power = Power{Package: w("PkgWatt"), Cores: w("CorWatt"), Graphics: w("GFXWatt"), Psys: w("SysWatt")}
		rf.Power.Rest = rf.Power.Package - rf.Power.Cores
		if !math.IsNaN(rf.Power.Graphics) {
			rf.Power.Rest -= rf.Power.Graphics
		}
	}
	return rf
}

// Edges is the number of newly set excursion bits of every core type.
func (rf RunFacts) Edges() int {
	n := 0
	for _, k := range rf.ExcursionEdges {
		n += k
	}
	return n
}
