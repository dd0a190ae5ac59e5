// SPDX-License-Identifier: Apache-2.0

package conform

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/hwpprobe/hwpprobe/ebpf"
	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
	"github.com/hwpprobe/hwpprobe/internal/machine/regs"
	"github.com/hwpprobe/hwpprobe/internal/machine/snapshot"
	"github.com/hwpprobe/hwpprobe/internal/reports/verdict"
	"github.com/hwpprobe/hwpprobe/internal/sampling/source"
)

// relTol is the tolerance on a delivered frequency beyond the measured
// noise: 2% (APERF/MPERF over a few hundred ms of a busy CPU on a real
// part varies by well under that; a bus-clock step at 4 GHz is 2.5%).
const relTol = 0.02

// result is one profile's case and what the epp-order check compares.
type result struct {
	p    *profile.Profile
	c    *verdict.Case
	gov  string
	reqs map[string]request // per core type
	got  map[string]measured
}

// request is a core type's request register fields (all its CPUs alike,
// else ok is false) and EPP.
type request struct {
	min, max, epp int
	ok            bool
}

// checkProfile applies p from the original settings and checks it per
// core type; a profile the machine cannot apply is a skipped case.
func checkProfile(cfg Config, sw *profile.Switcher, m *profile.Machine, set *source.Set, tr *trace, p *profile.Profile) (*result, error) {
	r := &result{p: p, c: &verdict.Case{Name: caseName(p)}}
	if res, err := sw.Revert(); err != nil {
		return nil, err
	} else if len(res.Failed) > 0 {
		return nil, errors.Join(res.Failed...)
	}
	_, err := sw.Apply(p)
	var we *profile.WriteError
	switch {
	case errors.Is(err, profile.ErrRefused), errors.As(err, &we):
		r.c.Result, r.c.Reason = verdict.Skip, "the machine cannot apply it: "+strings.TrimPrefix(err.Error(), profile.ErrRefused.Error()+": ")
		return r, nil
	case err != nil:
		return nil, err
	}
	s, err := snapshot.Build(cfg.Sources, "")
	if err != nil {
		return nil, fmt.Errorf("%s: read the registers: %w", p, err)
	}
	got, writes, err := measure(cfg, set, tr, s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	r.gov, r.got, r.reqs = p.Get(profile.Governor), got, map[string]request{}
	for _, g := range s.Groups {
		rq, regs := registers(m, p, g.CPUs)
		r.reqs[g.CoreType] = rq
		ct := &verdict.Case{Name: typeName(g.CoreType)}
		ct.Cases = append(ct.Cases, regs)
		ct.Cases = append(ct.Cases, delivery(p, g.CPUs, got[g.CoreType])...)
		r.c.Cases = append(r.c.Cases, ct)
	}
	r.c.Cases = append(r.c.Cases, stability(tr, writes))
	return r, nil
}

// typeName is a core type's case name ("all" on a machine of one type).
func typeName(t string) string {
	if t == "" {
		return "all"
	}
	return t
}

// registers checks what the kernel wrote for p on a core type's CPUs
// against its documented rules (docs/matrix.md, docs/apply.md): the
// governor asked; under performance min = max (intel_pstate) or min =
// nominal (amd-pstate) and EPP 0; an EPP string's value on this model;
// the EPB asked.
func registers(m *profile.Machine, p *profile.Profile, cs []snapshot.CPU) (request, *verdict.Case) {
	var bad, diag []string
	rq := request{ok: true}
	for i, c := range cs {
		q, ok := c.Registers.Request()
		min, max, epp := int(q.Min), int(q.Max), int(q.EPP)
		if !ok {
			return request{}, verdict.Skipf("registers", "cpu%d: no request register read", c.CPU)
		}
		if i == 0 {
			rq.min, rq.max, rq.epp = min, max, epp
			diag = append(diag, fmt.Sprintf("request min %d max %d EPP %d (cpu%d)", min, max, epp, c.CPU))
		} else if rq.min != min || rq.max != max || rq.epp != epp {
			rq.ok = false
		}
		gov := deref(c.Sysfs.ScalingGovernor)
		if want, ok := p.For(profile.Governor, c.CPU); ok && want != gov {
			bad = append(bad, fmt.Sprintf("cpu%d governor %s, not %s", c.CPU, gov, want))
		}
		if gov == "performance" {
			if epp != 0 {
				bad = append(bad, fmt.Sprintf("cpu%d EPP %d under performance, not 0", c.CPU, epp))
			}
			switch cap1 := c.Registers.CPPCCap1; {
			case q.Register.Vendor == regs.Intel && min != max:
				bad = append(bad, fmt.Sprintf("cpu%d HWP min %d != max %d under performance (intel_pstate_hwp_set)", c.CPU, min, max))
			case cap1 != nil && min != int(cap1.Nominal):
				bad = append(bad, fmt.Sprintf("cpu%d CPPC min %d, not nominal %d under performance (commit 0c411b39e4f4)", c.CPU, min, cap1.Nominal))
			}
		}
		if want, ok := p.For(profile.EPP, c.CPU); ok {
			if v, known := m.EPPTable.Value(want); known && int(v) != epp {
				bad = append(bad, fmt.Sprintf("cpu%d EPP %d, not the %d that epp=%s gives (%s)", c.CPU, epp, v, want, m.EPPTable.Source))
			}
		}
		if want, ok := p.For(profile.EPB, c.CPU); ok && c.Registers.EPB != nil {
			if v := m.EPBValue(want); v != c.Registers.EPB.Value {
				bad = append(bad, fmt.Sprintf("cpu%d EPB %d, not the %d that epb=%s gives", c.CPU, c.Registers.EPB.Value, v, want))
			}
		}
	}
	c := verdict.Passf("registers", diag...)
	if len(bad) > 0 {
		c.Result, c.Reason = verdict.Fail, strings.Join(bad, "; ")
	}
	return rq, c
}

func deref[T any](p *T) T {
	var z T
	if p == nil {
		return z
	}
	return *p
}

// bound is the loosest of the CPUs' values of one sysfs frequency (the
// highest with hi, the lowest without), in MHz; 0 when none is read.
func bound(cs []snapshot.CPU, get func(snapshot.CPUSysfs) *int64, hi bool) float64 {
	var v int64
	for _, c := range cs {
		x := get(c.Sysfs)
		if x == nil {
			continue
		}
		if v == 0 || (hi && *x > v) || (!hi && *x < v) {
			v = *x
		}
	}
	return float64(v) / 1000
}

// delivery checks a core type's Bzy_MHz under the load: within the
// request's [scaling_min_freq, scaling_max_freq] unless a limit reason
// was active; under performance at the highest level (cpuinfo_max_freq)
// unless limited; with turbo off at most guaranteed (base_frequency);
// with scaling_max_freq asked at most that.
func delivery(p *profile.Profile, cs []snapshot.CPU, g measured) []*verdict.Case {
	if !g.ok {
		return []*verdict.Case{verdict.Skipf("delivery", "no Bzy_MHz for these CPUs: %s", g.why)}
	}
	tol := g.noise + relTol*g.bzy
	diag := []string{fmt.Sprintf("Bzy_MHz %.0f (halves %.0f, %.0f; noise %.0f) Busy%% %.1f", g.bzy, g.halves[0], g.halves[1], g.noise, g.busy)}
	if len(g.limits) > 0 {
		diag = append(diag, "limit reasons active: "+strings.Join(g.limits, ", "))
	}
	lo := bound(cs, func(s snapshot.CPUSysfs) *int64 { return s.ScalingMinKHz }, false)
	hi := bound(cs, func(s snapshot.CPUSysfs) *int64 { return s.ScalingMaxKHz }, true)
	var out []*verdict.Case
	out = append(out, within("delivery", g, tol, lo, hi, diag))
	if p.Get(profile.Governor) == "performance" {
		top := bound(cs, func(s snapshot.CPUSysfs) *int64 { return s.CPUInfoMaxKHz }, false)
		out = append(out, within("highest", g, tol, top, math.Inf(1), []string{fmt.Sprintf("Bzy_MHz %.0f, highest level %.0f MHz (cpuinfo_max_freq)", g.bzy, top)}))
	}
	if p.Get(profile.NoTurbo) == "1" || p.Get(profile.Boost) == "0" {
		base := bound(cs, func(s snapshot.CPUSysfs) *int64 { return s.BaseFreqKHz }, true)
		if base == 0 {
			base = bound(cs, func(s snapshot.CPUSysfs) *int64 { return s.CPUInfoMaxKHz }, true)
		}
		out = append(out, within("no_turbo", g, tol, 0, base, []string{fmt.Sprintf("Bzy_MHz %.0f, guaranteed %.0f MHz", g.bzy, base)}))
	}
	if v := p.Get(profile.ScalingMaxFreq); v != "" {
		khz, _ := profile.ParseKHz(v)
		out = append(out, within("scaling_max_freq", g, tol, 0, float64(khz)/1000, []string{fmt.Sprintf("Bzy_MHz %.0f, scaling_max_freq %.0f MHz", g.bzy, float64(khz)/1000)}))
	}
	return out
}

// within passes when the Bzy_MHz is in [lo-tol, hi+tol]; outside it, it
// passes when a limit reason was active (naming it) and fails otherwise.
func within(name string, g measured, tol, lo, hi float64, diag []string) *verdict.Case {
	c := verdict.Passf(name, diag...)
	if g.bzy >= lo-tol && g.bzy <= hi+tol {
		return c
	}
	if len(g.limits) > 0 {
		c.Diag = append(c.Diag, fmt.Sprintf("outside [%.0f, %.0f] MHz, limited by %s", lo, hi, strings.Join(g.limits, ", ")))
		return c
	}
	c.Result, c.Reason = verdict.Fail, fmt.Sprintf("Bzy_MHz %.0f outside [%.0f, %.0f] MHz (tolerance %.0f) with no limit reason active", g.bzy, lo, hi, tol)
	return c
}

// stability fails when a register write happened during the load: the
// settings changed under the check.
func stability(tr *trace, writes []ebpf.Event) *verdict.Case {
	if tr.src == nil {
		return verdict.Skipf("stability", "%s", tr.why)
	}
	if len(writes) == 0 {
		return verdict.Passf("stability", "no write to %s during the load", settingNames())
	}
	var who []string
	for _, e := range writes {
		w := fmt.Sprintf("%s[%d] wrote MSR %#x = %#x on cpu%d", e.Comm, e.PID, e.MSR, e.Value, e.CPU)
		if !slices.Contains(who, w) {
			who = append(who, w)
		}
	}
	return verdict.Failf("stability", "%d register writes during the load: %s", len(writes), strings.Join(who, "; "))
}

// eppOrder checks, per core type, that of two profiles under powersave
// whose requests differ only in EPP, the higher EPP never delivers more
// beyond the measured noise. Nil when no two profiles compare.
func eppOrder(rs []*result) *verdict.Case {
	out := &verdict.Case{Name: "epp-order"}
	types := map[string]*verdict.Case{}
	var order []string
	for i, a := range rs {
		for _, b := range rs[i+1:] {
			if a.gov != "powersave" || b.gov != "powersave" {
				continue
			}
			for t, ra := range a.reqs {
				rb, ok := b.reqs[t]
				ga, gb := a.got[t], b.got[t]
				if !ok || !ra.ok || !rb.ok || ra.min != rb.min || ra.max != rb.max || ra.epp == rb.epp || !ga.ok || !gb.ok {
					continue
				}
				lo, hi, glo, ghi := a, b, ga, gb
				if ra.epp > rb.epp {
					lo, hi, glo, ghi = b, a, gb, ga
				}
				tol := glo.noise + ghi.noise + relTol*glo.bzy
				name := fmt.Sprintf("EPP %d vs %d", lo.reqs[t].epp, hi.reqs[t].epp)
				c := verdict.Passf(name, fmt.Sprintf("%s: Bzy_MHz %.0f; %s: Bzy_MHz %.0f (tolerance %.0f)", lo.c.Name, glo.bzy, hi.c.Name, ghi.bzy, tol))
				if ghi.bzy > glo.bzy+tol {
					c.Result, c.Reason = verdict.Fail, fmt.Sprintf("EPP %d delivers %.0f MHz, more than EPP %d's %.0f beyond the noise", hi.reqs[t].epp, ghi.bzy, lo.reqs[t].epp, glo.bzy)
				}
				if types[t] == nil {
					types[t] = &verdict.Case{Name: typeName(t)}
					order = append(order, t)
				}
				types[t].Cases = append(types[t].Cases, c)
			}
		}
	}
	if len(order) == 0 {
		return nil
	}
	slices.Sort(order)
	for _, t := range order {
		out.Cases = append(out.Cases, types[t])
	}
	return out
}

// monotonic is CLOCK_MONOTONIC in ns, the trace's clock.
func monotonic() uint64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return uint64(ts.Nano())
}

// collect runs the trace from now until stop is closed and returns the
// writes made between from and the time stop was closed (read through
// end).
func (t *trace) collect(stop <-chan struct{}, end *uint64) (<-chan []ebpf.Event, uint64) {
	from := monotonic()
	out := make(chan []ebpf.Event, 1)
	if t.src == nil {
		out <- nil
		return out, from
	}
	ctx, cancel := context.WithCancel(context.Background())
	var evs []ebpf.Event
	done := make(chan error, 1)
	go func() { done <- t.src.Run(ctx, func(e *ebpf.Event) error { evs = append(evs, *e); return nil }) }()
	go func() {
		<-stop
		cancel()
		<-done
		var in []ebpf.Event
		for _, e := range evs {
			if e.TimeNs >= from && e.TimeNs <= *end {
				in = append(in, e)
			}
		}
		out <- in
	}()
	return out, from
}
