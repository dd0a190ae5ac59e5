// SPDX-License-Identifier: Apache-2.0

package profile

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
)

// ErrRefused is wrapped when a profile cannot be applied on this machine:
// a value it does not offer, out of its range, or one the kernel is known
// to refuse. Nothing has been written then.
var ErrRefused = errors.New("refused")

// Write is one sysfs write.
type Write struct {
	Key   Key
	CPU   int    // -1 for a global key
	Path  string // relative to the system root
	Value string
}

func (w Write) String() string { return "echo " + w.Value + " > /" + w.Path }

// Plan is a profile's writes against one machine, in the order the kernel
// accepts them.
type Plan struct {
	Profile *Profile
	Writes  []Write
}

// refuse returns an ErrRefused error.
func refuse(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, a...))
}

// Plan checks p against the machine and returns its writes. A profile the
// machine does not offer, or that the kernel is known to refuse, is an
// error wrapping ErrRefused (or ErrNoCPUFreq) naming the setting and the
// rule. Tuned, PPD and Current profiles make no sysfs writes.
func (m *Machine) Plan(p *Profile) (*Plan, error) {
	plan := &Plan{Profile: p}
	if p.Kind != Sysfs {
		return plan, nil
	}
	if err := m.checkCPUs(p); err != nil {
		return nil, err
	}
	for _, k := range m.globalOrder(p) {
		v := p.Get(k)
		if err := m.checkGlobal(p, k, v); err != nil {
			return nil, err
		}
		plan.Writes = append(plan.Writes, Write{Key: k, CPU: -1, Path: Path(k, 0), Value: v})
	}
	for _, k := range m.cpuOrder(p) {
		for _, c := range m.Online {
			v, ok := p.For(k, c)
			if !ok {
				continue
			}
			if err := m.checkCPU(p, k, c, v); err != nil {
				return nil, err
			}
			plan.Writes = append(plan.Writes, Write{Key: k, CPU: c, Path: Path(k, c), Value: v})
		}
	}
	return plan, nil
}

// checkCPUs checks that every CPU a subset names is online, and that
// cpufreq exists when the profile needs it.
func (m *Machine) checkCPUs(p *Profile) error {
	needsFreq := false
	for _, s := range p.Settings {
		if s.Key != EPB && !s.Key.Global() {
			needsFreq = true
		}
		if missing := s.CPUs.Minus(m.Online); len(missing) > 0 {
			return refuse("%s: CPU %s is not online (online: %s)", s, missing, m.Online)
		}
	}
	if needsFreq && !m.Offers[m.Online[0]].HasCPUFreq {
		return fmt.Errorf("%w: /%s/cpu%d/cpufreq is absent: no cpufreq scaling driver is loaded (a VM guest normally has none: the hypervisor owns P-states)",
			ErrNoCPUFreq, cpuSysfs, m.Online[0])
	}
	return nil
}

// globalOrder is the profile's global keys in write order; max_perf_pct
// goes before min_perf_pct when the new minimum is above the present
// maximum (store_min_perf_pct() clamps to max_perf_pct).
func (m *Machine) globalOrder(p *Profile) []Key {
	var ks []Key
	for _, k := range globalKeys {
		if p.Get(k) != "" {
			ks = append(ks, k)
		}
	}
	newMin, ok1 := intValue(p.Get(MinPerfPct))
	curMax, ok2 := intValue(m.State.Globals[MaxPerfPct])
	if ok1 && ok2 && newMin > curMax && p.Get(MaxPerfPct) != "" {
		i, j := slices.Index(ks, MinPerfPct), slices.Index(ks, MaxPerfPct)
		ks[i], ks[j] = ks[j], ks[i]
	}
	return ks
}

// cpuOrder is the profile's per-CPU keys in write order: limits, then the
// governor, then EPP (intel_pstate and amd-pstate refuse a non-zero EPP
// under performance, and the governor switch itself rewrites the EPP),
// then EPB.
func (m *Machine) cpuOrder(p *Profile) []Key {
	var ks []Key
	for _, k := range []Key{ScalingMinFreq, ScalingMaxFreq, Governor, EPP, EPB} {
		for _, s := range p.Settings {
			if s.Key == k {
				ks = append(ks, k)
				break
			}
		}
	}
	return ks
}

// checkGlobal checks a machine-wide setting.
func (m *Machine) checkGlobal(p *Profile, k Key, v string) error {
	if !m.FS.Exists(Path(k, 0)) {
		why := "intel_pstate is not the driver (" + orNone(m.Driver) + ")"
		if k == Boost {
			why = "the driver (" + orNone(m.Driver) + ") has no global boost switch; intel_pstate has no_turbo"
		}
		return refuse("%s=%s: /%s is absent: %s", k, v, Path(k, 0), why)
	}
	if k == MinPerfPct || k == MaxPerfPct {
		lo, hi := m.State.Globals[MinPerfPct], m.State.Globals[MaxPerfPct]
		if v := p.Get(MinPerfPct); v != "" {
			lo = v
		}
		if v := p.Get(MaxPerfPct); v != "" {
			hi = v
		}
		if a, ok1 := intValue(lo); ok1 {
			if b, ok2 := intValue(hi); ok2 && a > b {
				return refuse("%s=%s: min_perf_pct %d would be above max_perf_pct %d (the kernel clamps it)", k, v, a, b)
			}
		}
	}
	return nil
}

// checkCPU checks one per-CPU setting on cpu against what it offers.
func (m *Machine) checkCPU(p *Profile, k Key, cpu int, v string) error {
	o := m.Offers[cpu]
	if k == EPB {
		if !o.HasEPB {
			return refuse("epb=%s: cpu%d has no /%s (no EPB feature)", v, cpu, Path(EPB, cpu))
		}
		return nil
	}
	if !o.HasCPUFreq {
		return fmt.Errorf("%w: cpu%d has no cpufreq policy", ErrNoCPUFreq, cpu)
	}
	switch k {
	case Governor:
		if !slices.Contains(o.Governors, v) {
			return refuse("governor=%s: cpu%d offers %s (scaling_available_governors)", v, cpu, strings.Join(o.Governors, ", "))
		}
	case EPP:
		return m.checkEPP(p, cpu, v)
	case ScalingMinFreq, ScalingMaxFreq:
		return m.checkFreq(p, k, cpu, v)
	}
	return nil
}

// checkEPP applies the drivers' EPP rules: the name must be offered, and
// under the performance governor intel_pstate and amd-pstate refuse any
// EPP but 0 with EBUSY (intel_pstate_set_energy_pref_index() in
// drivers/cpufreq/intel_pstate.c, since commit 8442885fca09;
// store_energy_performance_preference() in drivers/cpufreq/amd-pstate.c).
func (m *Machine) checkEPP(p *Profile, cpu int, v string) error {
	o := m.Offers[cpu]
	if !o.HasEPP {
		return refuse("epp=%s: cpu%d has no energy_performance_preference (driver %s, no HWP EPP)", v, cpu, orNone(m.Driver))
	}
	gov, ok := p.For(Governor, cpu)
	if cs := m.State.CPU(cpu); !ok && cs != nil {
		gov = cs.Values[Governor]
	}
	_, numeric := intValue(v)
	amd := strings.HasPrefix(m.Driver, "amd-pstate")
	switch {
	case numeric && amd:
		return refuse("epp=%s: amd-pstate takes only the names %s", v, strings.Join(EPPNames, ", "))
	case !numeric && !slices.Contains(o.EPPs, v) && !slices.Contains(EPPNames, v):
		return refuse("epp=%s: cpu%d offers %s", v, cpu, strings.Join(o.EPPs, ", "))
	}
	if gov != "performance" {
		return nil
	}
	val, known := m.EPPTable.Value(v)
	if known && val == 0 {
		return nil
	}
	driver := "intel_pstate"
	if amd {
		driver = "amd-pstate"
	}
	what := "EPP " + strconv.Itoa(int(val))
	if !known {
		what = "the boot-time EPP"
	}
	if !numeric && known {
		what += " on this model (" + m.EPPTable.Source + ")"
	}
	return refuse("epp=%s@%d under governor performance: %q is %s, and %s refuses any EPP but 0 under the performance policy (EBUSY); use governor=powersave, or epp=0",
		v, cpu, v, what, driver)
}

// checkFreq checks a frequency limit against cpuinfo_min/max_freq (the
// kernel clamps silently) and against the other limit.
func (m *Machine) checkFreq(p *Profile, k Key, cpu int, v string) error {
	o := m.Offers[cpu]
	khz, _ := intValue(v)
	if khz < o.MinKHz || khz > o.MaxKHz {
		return refuse("%s=%s: cpu%d takes %d-%d kHz (cpuinfo_min_freq, cpuinfo_max_freq); the kernel would clamp it", k, v, cpu, o.MinKHz, o.MaxKHz)
	}
	lo, hi := v, ""
	if k == ScalingMaxFreq {
		lo, hi = "", v
	}
	cs := m.State.CPU(cpu)
	if lo == "" {
		if lo, _ = p.For(ScalingMinFreq, cpu); lo == "" && cs != nil {
			lo = cs.Values[ScalingMinFreq]
		}
	}
	if hi == "" {
		if hi, _ = p.For(ScalingMaxFreq, cpu); hi == "" && cs != nil {
			hi = cs.Values[ScalingMaxFreq]
		}
	}
	a, ok1 := intValue(lo)
	b, ok2 := intValue(hi)
	if ok1 && ok2 && a > b {
		return refuse("%s=%s: cpu%d would have scaling_min_freq %d above scaling_max_freq %d", k, v, cpu, a, b)
	}
	return nil
}

// Subset returns the CPUs a plan writes per-CPU settings to.
func (pl *Plan) Subset() cpus.List {
	var l cpus.List
	for _, w := range pl.Writes {
		if w.CPU >= 0 && !l.Contains(w.CPU) {
			l = append(l, w.CPU)
		}
	}
	slices.Sort(l)
	return l
}
