// SPDX-License-Identifier: Apache-2.0

package emu

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/hwpprobe/hwpprobe/rapl"
)

// MSR_CORE_PERF_LIMIT_REASONS (0x64F) bits the model sets, from the SDM's
// table for the 6th generation and later Intel Core processors (vol. 4,
// MSR 64FH): bit 0 PROCHOT Status, 1 Thermal Status, 10 Package-Level
// Power Limiting PL1 Status, 11 PL2 Status; each status bit n has its
// sticky log at bit n+16.
const (
	reasonProchot = 0
	reasonThermal = 1
	reasonPL1     = 10
	reasonPL2     = 11
	reasonLog     = 16 // log bit = status bit + reasonLog
)

// hwpStatusExcursion is IA32_HWP_STATUS bit 2, Excursion To Minimum (SDM
// vol. 3B, HWP status): the delivered performance went below the
// request's Minimum_Performance.
const hwpStatusExcursion = 1 << 2

// Limit indexes: PL1, PL2 (MSR_PKG_POWER_LIMIT) and the thermal limit
// (thermal.go), whose average of package power is (T - T_amb) / R.
const (
	limPL1 = iota
	limPL2
	limThermal
	numLimits
)

// limitState is a package's limits: MSR_PKG_POWER_LIMIT and the
// exponentially weighted average of package power each limit holds.
type limitState struct {
	has     bool   // the package has a pkg_power_limit register
	reg     uint64 // MSR_PKG_POWER_LIMIT
	ewma    [numLimits]float64
	reasons uint64 // MSR_CORE_PERF_LIMIT_REASONS: status 15:0, log 31:16
	therm   uint64 // IA32_PACKAGE_THERM_STATUS status and log bits (thermal.go)
	watts   float64
	level   float64 // the last interval's sharing level (fullLevel: not limited)
}

// pl is one power limit as the model uses it.
type pl struct {
	watts   float64
	tau     float64 // seconds, after the time scale
	enabled bool
}

// initLimits reads package p's MSR_PKG_POWER_LIMIT from the description;
// the averages start at the package's idle power (assumed: the machine
// was idle before it was emulated).
func (m *Machine) initLimits(p int) limitState {
	var l limitState
	for _, r := range m.desc.MSRs {
		if r.Kind == "pkg_power_limit" {
			l.has, l.reg = true, r.Value
		}
	}
	for i := range l.ewma {
		l.ewma[i] = m.desc.Power.IdleW
	}
	l.level = fullLevel
	return l
}

// limits decodes the register with the machine's RAPL units: PL1 and PL2
// with their time windows divided by the time scale; and the thermal
// limit (thermalLimit).
func (m *Machine) limits(l *limitState) [numLimits]pl {
	var out [numLimits]pl
	out[limThermal] = m.thermalLimit()
	if !l.has {
		return out
	}
	u := rapl.DecodePowerUnit(m.msrs[msrKey{m.desc.RAPL.UnitMSR, ""}].Value)
	d := rapl.DecodePowerLimit(l.reg, u)
	for i, x := range []rapl.Limit{d.PL1, d.PL2} {
		out[i] = pl{watts: x.Power, tau: x.Window / m.timeScale, enabled: x.Enabled && x.Power > 0}
	}
	return out
}

// cpuDemand is what one busy CPU asks for over an interval.
type cpuDemand struct {
	c      *cpu
	b      float64 // busy fraction
	mhz    float64 // the frequency its request gives (deliveredMHz)
	floor  float64 // the lowest the hardware runs it at (HWP Lowest)
	minMHz float64 // the request's minimum: the sharing rule's floor, the excursion threshold
	coef   float64 // busy power = coef x f^exponent
	a      float64 // weight of the efficient sharing rule: EPP / 255
	effMHz float64 // the efficient rule's frequency at scale 1 (>= mhz)
	pinMHz float64 // min-pins: the level its request pins (min = max); 0 otherwise
}

// pkgDemand is a package's load over an interval.
type pkgDemand struct {
	cpus   []cpuDemand
	fixedW float64 // idle + uncore x mean busy: not scaled with frequency
	exp    float64
}

// fullLevel is the sharing level at which every CPU gets its request
// (no limit holds); see cpuDemand.freq.
const fullLevel = 2

// freq is the frequency CPU d runs at when its package's budget is
// shared at level lv in [0, fullLevel]:
//
//   - lv in [1, 2], above the minimum: with the scale s = lv - 1, a
//     blend, weighted by the request's EPP (a = EPP / 255), of two rules
//     for sharing a power budget, never below the request's minimum
//     (nor HWP Lowest; at most the request). The uniform rule (EPP 0):
//     every busy CPU gives up the same fraction of its request, s x mhz.
//     The efficient rule (EPP 255): the frequencies that cost the same
//     marginal power per MHz on every CPU, s x effMHz, capped at the
//     request (effMHz: setEfficient), so the budget goes where a MHz is
//     cheapest.
//   - lv in [0, 1), below it: every CPU is at its minimum at lv = 1 and
//     falls below it together, lv x that minimum, never below HWP
//     Lowest: an excursion (IA32_HWP_STATUS bit 2), the only way the
//     hardware runs a CPU below its request's minimum.
func (d *cpuDemand) freq(lv float64) float64 {
	lo := min(max(d.minMHz, d.floor), d.mhz)
	if lv >= 1 {
		s := min(lv, fullLevel) - 1
		return max(lo, (1-d.a)*s*d.mhz+d.a*min(d.mhz, s*d.effMHz))
	}
	return max(d.floor, max(lv, 0)*lo)
}

// watts is CPU d's busy power at frequency f: b x coef x f^x. Under the
// min-pins variant a CPU whose request pins a level keeps that level's
// voltage and runs below it by gating cycles, each costing what it costs
// at the pinned level: b x coef x pin^(x-1) x f.
func (d *cpuDemand) watts(f, x float64) float64 {
	if d.pinMHz > 0 && f < d.pinMHz {
		return d.b * d.coef * pow(d.pinMHz, x-1) * f
	}
	return d.b * d.coef * pow(f, x)
}

// pow is math.Pow with the built-in machines' exponent 2 as one
// multiplication: the budget-sharing bisection computes it for every CPU
// some 60 times per read of a power-limited machine.
func pow(f, x float64) float64 {
	if x == 2 {
		return f * f
	}
	return math.Pow(f, x)
}

// setEfficient sets each CPU's effMHz: with busy power coef x f^x the
// marginal cost x coef f^(x-1) is equal on every CPU where f is
// proportional to coef^(-1/(x-1)); the common factor is the smallest that
// gives every CPU at least its request at scale 1, so that scale 1 is the
// request under both rules. With x <= 1 (no marginal-cost optimum) every
// CPU uses the uniform rule.
func (p *pkgDemand) setEfficient() {
	k := 0.0
	for i := range p.cpus {
		d := &p.cpus[i]
		if p.exp <= 1 || d.coef <= 0 {
			d.a = 0
			continue
		}
		k = max(k, d.mhz/math.Pow(d.coef, -1/(p.exp-1)))
	}
	for i := range p.cpus {
		d := &p.cpus[i]
		if d.a > 0 {
			d.effMHz = k * math.Pow(d.coef, -1/(p.exp-1))
		}
	}
}

// coreW is the package's core power at sharing level lv.
func (p *pkgDemand) coreW(lv float64) float64 {
	w := 0.0
	for i := range p.cpus {
		d := &p.cpus[i]
		w += d.watts(d.freq(lv), p.exp)
	}
	return w
}

// solveLevel returns the highest sharing level in [0, fullLevel] whose
// core power is at most budget (bisection: power rises with the level),
// 0 when even the floors exceed it.
func (p *pkgDemand) solveLevel(budget float64) float64 {
	if p.coreW(fullLevel) <= budget {
		return fullLevel
	}
	lo, hi := 0.0, float64(fullLevel)
	for range 60 {
		mid := (lo + hi) / 2
		if p.coreW(mid) <= budget {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// binding reports whether limit i holds the package's power now: enabled
// and its average has reached the limit.
func (l *limitState) binding(p pl, i int) bool {
	return p.enabled && l.ewma[i] >= p.watts*(1-1e-12)
}

// runPackage advances package ps over dt seconds of demand d, solving the
// limits exactly: within the interval the power is constant between the
// moments a limit's average reaches it, so the interval is cut there and
// each piece advances the averages in closed form, E' = P + (E - P) x
// exp(-t/tau). The result does not depend on how often the machine is
// read. It returns the package power of the last piece.
func (m *Machine) runPackage(ps *pkgState, d *pkgDemand, dt float64) float64 {
	l := &ps.limits
	lim := m.limits(l)
	full := d.fixedW + d.coreW(fullLevel)
	w := full
	for piece := 0; dt > 0; piece++ {
		capW, by := math.Inf(1), -1
		for i, p := range lim {
			if l.binding(p, i) && p.watts < capW {
				capW, by = p.watts, i
			}
		}
		lv := float64(fullLevel)
		w = full
		if full > capW {
			lv = d.solveLevel(capW - d.fixedW)
			w = d.fixedW + d.coreW(lv)
		}
		step, hit := dt, -1
		for i, p := range lim {
			if !p.enabled || l.binding(p, i) || w <= p.watts || piece >= 2*numLimits {
				continue
			}
			if t := p.tau * math.Log((w-l.ewma[i])/(w-p.watts)); t < step {
				step, hit = max(t, 0), i
			}
		}
		m.applyPiece(ps, d, lv, step)
		for i, p := range lim {
			switch {
			case i == hit:
				l.ewma[i] = p.watts
			case p.tau > 0:
				l.ewma[i] = w + (l.ewma[i]-w)*math.Exp(-step/p.tau)
			default:
				l.ewma[i] = w
			}
		}
		l.setReasons(by, lv)
		m.setThermStatus(ps, d, lv, l.binding(lim[limThermal], limThermal))
		dt -= step
	}
	l.watts = w
	return w
}

// reasonBits maps a limit index to its MSR_CORE_PERF_LIMIT_REASONS
// status bit.
var reasonBits = [numLimits]uint{limPL1: reasonPL1, limPL2: reasonPL2, limThermal: reasonThermal}

// setReasons sets the status bit for the limit that holds the frequency
// down (by, with sharing level lv < fullLevel), clears the others, and
// logs.
func (l *limitState) setReasons(by int, lv float64) {
	l.level = lv
	for _, b := range reasonBits {
		l.reasons &^= 1 << b
	}
	if lv >= fullLevel || by < 0 {
		return
	}
	bit := uint64(1) << reasonBits[by]
	l.reasons |= bit | bit<<reasonLog
}

// applyPiece advances the counters of package ps's CPUs over step seconds
// at sharing level lv: APERF at the delivered frequency, energy at the
// power it costs, and the excursion bit of any CPU delivered below its
// minimum.
func (m *Machine) applyPiece(ps *pkgState, d *pkgDemand, lv, step float64) {
	tscHz := float64(m.desc.TSCMHz) * 1e6
	coreW := 0.0
	busy := 0.0
	for i := range d.cpus {
		cd := &d.cpus[i]
		c := cd.c
		f := cd.freq(lv)
		c.lastMHz = f
		c.mperf += cd.b * step * tscHz
		c.aperf += cd.b * step * f * 1e6
		c.idle += (1 - cd.b) * step * tscHz
		c.busySec += cd.b * step
		w := cd.watts(f, d.exp)
		c.joules += w * step
		coreW += w
		busy += cd.b
		if cd.b > 0 && f < cd.minMHz*(1-1e-9) {
			c.hwpStatus |= hwpStatusExcursion
		}
	}
	p := m.desc.Power
	mean := 0.0
	if len(d.cpus) > 0 {
		mean = busy / float64(len(d.cpus))
	}
	uncore := p.UncoreW * mean
	ps.joules["pkg"] += (d.fixedW + coreW) * step
	ps.joules["core"] += coreW * step
	ps.joules["uncore"] += uncore * step
	ps.joules["dram"] += (p.DRAMW + p.DRAMBusyW*mean) * step
}

// Summary is one line about what the model enforces and assumes, for
// hwpemu's banner: the power limits of package 0 with their time windows
// (after the time scale), or that none is enforced.
func (m *Machine) Summary() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var parts []string
	lim := m.limits(&m.pkgs[0].limits)
	for i, p := range lim[:limThermal] {
		if p.enabled {
			parts = append(parts, fmt.Sprintf("PL%d %g W over %s", i+1, p.watts, seconds(p.tau)))
		}
	}
	s := "no power limit enforced"
	if len(parts) > 0 {
		s = "power limits " + strings.Join(parts, ", ") + " (MSR_PKG_POWER_LIMIT, averaged as the SDM's RAPL)"
	}
	if t := m.thermalSummary(); t != "" {
		s += "; " + t
	}
	if m.timeScale != 1 {
		s += fmt.Sprintf(", time constants divided by %g", m.timeScale)
	}
	return s + "; power and frequency-sharing model assumed (docs/emulator.md)"
}

// seconds formats a duration in seconds as "28 s" or "2.44 ms".
func seconds(s float64) string {
	if s < 1 {
		return strconv.FormatFloat(s*1000, 'g', 3, 64) + " ms"
	}
	return strconv.FormatFloat(s, 'g', 3, 64) + " s"
}
