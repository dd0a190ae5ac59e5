// SPDX-License-Identifier: Apache-2.0

package emu

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hwpprobe/hwpprobe/hwp"
)

// Errors handed to readers unchanged (the real drivers' answers).
var (
	errNoCPU = syscall.ENXIO // msr_open/cpuid_open on an offline CPU
	errNoReg = syscall.EIO   // rdmsr_safe_on_cpu faulted
)

// LoadSource reports how busy each host CPU was, as a fraction in [0,1],
// since its previous call. Emulated CPU n follows host CPU n modulo the
// number of host CPUs, so a real workload on the host shows up.
type LoadSource interface {
	Busy() []float64
}

// ConstLoad is a LoadSource with fixed busy fractions (tests).
type ConstLoad []float64

// Busy returns the fixed fractions.
func (c ConstLoad) Busy() []float64 { return c }

// HostLoad reads busy fractions from the host's /proc/stat. The file is
// opened by NewHostLoad, before any mount namespace puts the emulated
// /proc/stat over the real one, and re-read through that descriptor: the
// emulator never reads its own /proc/stat (which would make a FUSE server
// wait on itself). Busy is (total - idle - iowait) / total over the cpuN
// lines' deltas; intervals shorter than one tick repeat the last
// fractions. A read error gives 0.
//
// A HostLoad made as a literal with Path set (and no NewHostLoad) opens
// Path on every call instead; /proc/self/fd/N of a descriptor opened
// before the mounts works the same way.
type HostLoad struct {
	Path string // read on each call when the HostLoad was not made by NewHostLoad

	f    *os.File
	prev [][2]uint64 // per host CPU: busy, total ticks
	last []float64
}

// NewHostLoad opens path (normally /proc/stat) now.
func NewHostLoad(path string) (*HostLoad, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("host load: %w", err)
	}
	return &HostLoad{f: f}, nil
}

// Close closes the file NewHostLoad opened.
func (h *HostLoad) Close() error {
	if h.f == nil {
		return nil
	}
	return h.f.Close()
}

// Busy implements LoadSource. It is not safe for concurrent use; the
// Machine serializes its calls.
func (h *HostLoad) Busy() []float64 {
	cur, err := h.read()
	if err != nil || len(cur) == 0 {
		return []float64{0}
	}
	if len(h.prev) != len(cur) {
		h.prev = make([][2]uint64, len(cur))
		h.last = make([]float64, len(cur))
	}
	for i, c := range cur {
		db, dt := c[0]-h.prev[i][0], c[1]-h.prev[i][1]
		if dt > 0 {
			h.last[i] = float64(db) / float64(dt)
		}
	}
	h.prev = cur
	return h.last
}

func (h *HostLoad) read() ([][2]uint64, error) {
	if h.f == nil {
		b, err := os.ReadFile(h.Path)
		if err != nil {
			return nil, err
		}
		return parseStatTicks(h.Path, b)
	}
	if _, err := h.f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(h.f)
	if err != nil {
		return nil, err
	}
	return parseStatTicks(h.f.Name(), b)
}

// parseStatTicks parses the cpuN lines of a /proc/stat text into busy and
// total ticks (fields: user nice system idle iowait irq softirq steal...).
func parseStatTicks(name string, b []byte) ([][2]uint64, error) {
	var out [][2]uint64
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		var total, idle uint64
		for i, s := range f[1:] {
			if i >= 8 { // guest and guest_nice are already in user/nice
				break
			}
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: %q: %w", name, f[0], err)
			}
			total += v
			if i == 3 || i == 4 {
				idle += v
			}
		}
		out = append(out, [2]uint64{total - idle, total})
	}
	return out, nil
}

// advance brings every counter up to the clock's present: over the
// interval since the last call each online CPU was busy for the load
// source's fraction, at the frequency its current request gives, lowered
// where a package's power limit holds (limits.go); energy follows the
// power model. Caller holds m.mu.
func (m *Machine) advance() {
	now, prev := m.now(), m.last
	dt := now.Sub(prev).Seconds()
	if dt <= 0 {
		return
	}
	m.last = now
	// The kernel's tick is 10 ms: a load source read more often than
	// that says nothing new, so the fractions are reused.
	if m.busy == nil || now.Sub(m.loadAt) >= 10*time.Millisecond || now.Before(m.loadAt) {
		m.busy = m.load.Busy()
		m.loadAt = now
	}
	demands := make([]*pkgDemand, len(m.pkgs))
	for i := range m.pkgs {
		demands[i] = m.demand(i)
	}
	if m.variant != VariantPlatformPL1 {
		m.runPackages(demands, dt)
		return
	}
	// The platform controller polls at whole multiples of its period
	// since boot: run up to each poll, then let it act on the
	// temperature of that moment.
	period := platformPollS / m.timeScale
	t, end := prev.Sub(m.boot).Seconds(), now.Sub(m.boot).Seconds()
	for {
		next := float64(m.platformNext) * period
		if next > end {
			m.runPackages(demands, end-t)
			return
		}
		m.runPackages(demands, max(next-t, 0))
		m.platformPoll(uint64((end - next) * 1e9))
		m.platformNext++
		t = next
	}
}

// runPackages advances every package over dt seconds of its demand, and
// psys with them.
func (m *Machine) runPackages(demands []*pkgDemand, dt float64) {
	for i, ps := range m.pkgs {
		before := ps.joules["pkg"]
		m.runPackage(ps, demands[i], dt)
		m.psysJ += ps.joules["pkg"] - before
	}
	m.psysJ += m.desc.Power.PlatformW * dt
}

// demand collects package pkg's load: every online CPU's busy fraction,
// requested frequency, floor and power coefficient.
func (m *Machine) demand(pkg int) *pkgDemand {
	p := m.desc.Power
	d := &pkgDemand{exp: p.Exponent}
	busy := 0.0
	for _, c := range m.cpus {
		if !c.online || c.pkg != pkg {
			continue
		}
		b := 0.0
		if len(m.busy) > 0 {
			b = math.Min(1, math.Max(0, m.busy[c.n%len(m.busy)]))
		}
		op := m.operatingPoint(c, b)
		cd := cpuDemand{c: c, b: b, mhz: op.mhz, floor: op.floorMHz, minMHz: op.minMHz, coef: op.coef,
			a: float64(op.epp) / 255}
		if op.pinned && m.variant == VariantMinPins {
			cd.pinMHz = op.mhz
		}
		d.cpus = append(d.cpus, cd)
		busy += b
	}
	d.setEfficient()
	mean := 0.0
	if len(d.cpus) > 0 {
		mean = busy / float64(len(d.cpus))
	}
	d.fixedW = p.IdleW + p.UncoreW*mean
	return d
}

// opPoint is a CPU's requested frequency, the bounds the hardware keeps
// it in, and its power coefficient, for one value of its request
// register and load.
type opPoint struct {
	req      uint64  // the request register value it was computed for
	load     float64 // the load (loadOf) it was computed for
	valid    bool
	mhz      float64 // what the request gives (deliveredMHz)
	floorMHz float64 // the lowest the hardware runs it at: HWP Lowest (AMD: CPPC lowest)
	minMHz   float64 // the request's minimum (the excursion threshold)
	pinned   bool    // the request's minimum equals its maximum
	coef     float64 // busy power = coef x f^exponent (W, f in MHz)
	epp      uint8   // the request's EPP (0 without a driver)
}

// operatingPoint returns c's operating point at busy fraction b,
// recomputed only when its request register or the load b gives changed
// (advance runs on every read; a CPU busy at least fullLoadBusy keeps its
// point however its busy fraction moves).
func (m *Machine) operatingPoint(c *cpu, b float64) opPoint {
	var req uint64 // the register deliveredMHz reads; none without a driver
	switch m.desc.Driver.Name {
	case "intel_pstate":
		req = c.regs[msrHWPRequest]
	case "amd-pstate-epp":
		req = c.regs[msrCPPCReq]
	}
	u := loadOf(b)
	if c.op.valid && c.op.req == req && c.op.load == u {
		return c.op
	}
	mhz, ref := m.deliveredMHz(c, b)
	op := opPoint{req: req, load: u, valid: true, mhz: mhz, floorMHz: mhz, minMHz: 0}
	if ref > 0 {
		op.coef = c.ct.ActiveW / math.Pow(ref, m.desc.Power.Exponent)
	}
	op.floorMHz, op.minMHz, op.pinned = m.requestBounds(c, mhz)
	if m.desc.Driver.Name == "intel_pstate" || m.desc.Driver.Name == "amd-pstate-epp" {
		op.epp = uint8(req >> 24) // HWP_REQUEST and CPPC_REQ: EPP in bits 31:24
		if m.variant == VariantEPPVoltage {
			op.coef *= eppVoltage(op.epp)
		}
	}
	c.op = op
	return c.op
}

// requestBounds returns the lowest frequency the hardware runs c at, the
// minimum c's request asks for, and whether the request pins one level
// (minimum = maximum): HWP Lowest, HWP_REQUEST.min and .max (AMD: CPPC
// lowest, CPPC_REQ.min and .max), in MHz; without a driver both
// frequencies are mhz and nothing is pinned.
func (m *Machine) requestBounds(c *cpu, mhz float64) (floor, minMHz float64, pinned bool) {
	switch m.desc.Driver.Name {
	case "intel_pstate":
		v, _ := m.constMSR(c, msrHWPCapabilities)
		caps := hwp.DecodeCapabilities(v)
		r := hwp.DecodeRequest(c.regs[msrHWPRequest])
		k := float64(c.ct.PerfKHz) / 1000
		return float64(caps.Lowest) * k, float64(r.Min) * k, r.Min == r.Max
	case "amd-pstate-epp":
		cp := m.amdCaps(c)
		r := hwp.DecodeCPPCReq(c.regs[msrCPPCReq])
		k := float64(c.ct.NominalMHz) / float64(cp.nominal)
		return float64(cp.lowest) * k, float64(r.Min) * k, r.Min == r.Max
	}
	return mhz, mhz, false
}

// deliveredMHz is the frequency a CPU busy the fraction b of the time
// runs at under its current request, and the reference frequency of its
// core type's ActiveW.
//
// Intel (HWP): with Desired_Performance set, that value clamped to
// [Minimum, Maximum]; otherwise the hardware's choice (hwpTarget), between
// Most_Efficient_Performance and Highest_Performance by EPP and load,
// clamped to [Minimum, Maximum] and to [Lowest, Highest]. One performance
// unit is PerfKHz.
// AMD (CPPC): the same with CAP1 highest and lowest_nonlinear, in units of
// nominal_freq / nominal_perf.
// No driver: the TSC (base) frequency.
func (m *Machine) deliveredMHz(c *cpu, b float64) (mhz, ref float64) {
	switch m.desc.Driver.Name {
	case "intel_pstate":
		v, _ := m.constMSR(c, msrHWPCapabilities)
		caps := hwp.DecodeCapabilities(v)
		r := hwp.DecodeRequest(c.regs[msrHWPRequest])
		perf := hwpTarget(r.Min, m.requestMax(r.Max), r.Desired, r.EPP, int(caps.Lowest), int(caps.MostEfficient), int(caps.Highest), b)
		k := float64(c.ct.PerfKHz) / 1000
		return float64(perf) * k, float64(caps.Guaranteed) * k
	case "amd-pstate-epp":
		cp := m.amdCaps(c)
		r := hwp.DecodeCPPCReq(c.regs[msrCPPCReq])
		perf := hwpTarget(r.Min, m.requestMax(r.Max), r.Desired, r.EPP, cp.lowest, cp.lowestNonlinear, cp.highest, b)
		k := float64(c.ct.NominalMHz) / float64(cp.nominal)
		return float64(perf) * k, float64(c.ct.NominalMHz)
	}
	return float64(m.desc.TSCMHz), float64(m.desc.TSCMHz)
}

// requestMax is the request's Maximum as the model honours it: as written,
// or, under the deliberately broken VariantBrokenMax, 255 (no maximum:
// the capabilities' Highest bounds the level).
func (m *Machine) requestMax(max uint8) uint8 {
	if m.variant == VariantBrokenMax {
		return 255
	}
	return max
}

// fullLoadBusy is the busy fraction from which the frequency model treats
// a CPU as fully loaded (assumed; docs/emulator.md).
const fullLoadBusy = 0.5

// loadOf is the load u = min(1, b/fullLoadBusy) of a CPU busy the
// fraction b of the time: all the frequency model takes from b.
func loadOf(b float64) float64 { return min(1, max(0, b)/fullLoadBusy) }

// hwpTarget applies the frequency model to a request's min, max, desired
// and EPP (HWP_REQUEST or CPPC_REQ fields) for a CPU busy the fraction b
// of the time. With desired 0 the hardware chooses, with a = EPP/255 and
// the load u = min(1, b/fullLoadBusy), a point between efficient (E) and
// highest (H):
//
//	target = H - (H - E) x (a + a x (1 - a) x (1 - u))
//
// that is E + (H - E) x (1 - a) x (1 - a x (1 - u)): highest at EPP 0
// whatever the load; at full load the straight line from H at EPP 0 to E
// at EPP 255; below full load the higher the EPP the further toward E.
// The result is rounded and clamped to [max(min, lowest), min(max,
// highest)], then to [lowest, highest], the levels the hardware has. A
// request with min = max gets that level whatever desired, EPP and load
// say: the SDM calls it functionally equivalent to IA32_PERF_CTL, no
// autonomous selection.
func hwpTarget(minReq, maxReq, desReq, eppReq uint8, lowest, efficient, highest int, b float64) int {
	minP, maxP, des, epp := int(minReq), int(maxReq), int(desReq), int(eppReq)
	lo := max(minP, lowest)
	hi := min(maxP, highest)
	if hi < lo {
		hi = lo
	}
	t := des
	if t == 0 {
		a := float64(epp) / 255
		u := loadOf(b)
		span := float64(highest - efficient)
		// The first term is the full-load line, kept in integers so
		// that it rounds as before the load term existed.
		drop := float64((highest-efficient)*epp)/255 + span*a*(1-a)*(1-u)
		t = highest - int(math.Round(drop))
	}
	return min(max(t, lo, lowest), hi, highest)
}
