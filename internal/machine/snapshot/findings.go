// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/internal/machine/regs"
)

// Finding is one place where what sysfs says and what a register holds
// disagree ("disagreement"), or where a kernel rule makes them differ from
// what a user set ("note"), with the rule explained.
type Finding struct {
	Kind        string `json:"kind"`  // "disagreement" or "note"
	Check       string `json:"check"` // epp, performance_policy, epb, scaling_max_freq, scaling_min_freq, no_turbo, hwp_enable, package_control, power_limit, power_limit_mmio
	CPUs        string `json:"cpus"`  // the CPUs it applies to
	Sysfs       string `json:"sysfs"`
	Register    string `json:"register"`
	Explanation string `json:"explanation"`
}

// Finding kinds.
const (
	KindDisagreement = "disagreement"
	KindNote         = "note"
)

// ruleAMDEPP is the kernel rule for AMD's EPP, naming the request
// register from the catalog.
var ruleAMDEPP = "amd-pstate writes the EPP of the table (drivers/cpufreq/amd-pstate.c) into " + regs.RequestOf(regs.AMD).Name +
	" bits 31:24 and shows its cached request, so a mismatch means the register was written behind the driver's back"

// Kernel rules, cited once (docs/kernel-facts.md section 1 and the sources named).
const (
	rulePerformance  = "under the performance policy intel_pstate_hwp_set() writes HWP_REQUEST with min = max (the max_perf_ratio) and a literal EPP 0, whatever energy_performance_preference was (the old EPP is restored on the switch back to powersave), and refuses EPP writes other than 0 with EBUSY (drivers/cpufreq/intel_pstate.c); where the model's table maps performance to a non-zero EPP (Meteor Lake: 16), sysfs then shows \"default\" for the 0"
	ruleSDMMinMax    = "the SDM: setting Minimum_Performance = Maximum_Performance is functionally equivalent to IA32_PERF_CTL and bypasses HWP"
	ruleEPPShow      = "intel_pstate maps the EPP name through the model's table and show_energy_performance_preference() reads HWP_REQUEST live, so a mismatch means the register was written behind the driver's back (wrmsr, firmware, another tool) or this model's balance_performance came from firmware (intel_pstate_update_epp_defaults())"
	ruleAMDPerf      = "amd-pstate in active (EPP) mode writes EPP 0 under the performance policy (amd_pstate_epp_update_limit()); it no longer forces min = max since commit 0c411b39e4f4 (2024)"
	ruleEPB          = "energy_perf_bias prints the whole IA32_ENERGY_PERF_BIAS, read live on every read (energy_perf_bias_show(), arch/x86/kernel/cpu/intel_epb.c), so a mismatch means the register changed between the two reads; since 6.18 intel_pstate never writes EPB"
	ruleMax          = "intel_pstate converts scaling_max_freq to a performance level, caps it at DIV_ROUND_UP(highest x max_perf_pct, 100) and keeps it at or above the scaling_min_freq level before writing HWP_REQUEST.max (intel_pstate_update_perf_limits())"
	ruleMin          = "intel_pstate converts scaling_min_freq the same way, raises it to min_perf_pct of the turbo maximum and keeps it at or below max before writing HWP_REQUEST.min (intel_pstate_update_perf_limits())"
	ruleNoTurboMSR   = "IA32_MISC_ENABLE bit 38 (turbo disable, set by firmware) makes intel_pstate show no_turbo=1 and refuse to clear it (EPERM \"Turbo disabled by BIOS or unavailable on processor\"; update_turbo_state())"
	ruleNoTurboMax   = "with no_turbo=1 intel_pstate caps the policy maximum at max_freq, the guaranteed level (HWP_CAPABILITIES.guaranteed), so HWP_REQUEST.max should not exceed it (intel_pstate_get_max_freq())"
	rulePowercap     = "intel_rapl_common.c reads MSR_PKG_POWER_LIMIT for every read of constraint_0 (long_term, PL1) and constraint_1 (short_term, PL2) of the intel-rapl zone, converting with the MSR_RAPL_POWER_UNIT units (time unit truncated to whole µs), so they must match the register; a mismatch means the register changed between the reads or the zone belongs to another register"
	rulePowercapMMIO = "the package has a second copy of its power limits in MMIO (powercap zone intel-rapl-mmio, driver processor_thermal_rapl), which firmware or thermald may set differently from MSR_PKG_POWER_LIMIT; both copies are programmed into the package, so read both before concluding which PL1/PL2 is in force"
	ruleAMDLimits    = "amd-pstate converts the policy limits to performance levels with its own highest_perf (shown as amd_pstate_highest_perf) over cpuinfo_max_freq, raises min to the lowest level, and writes them as CPPC_REQ max and min (amd_pstate_update_min_max_limit())"
	rulePkgControl   = "HWP_REQUEST.Package_Control (bit 42) is set: the fields whose valid bit (63:59) is clear are taken from IA32_HWP_REQUEST_PKG, not from this register (SDM vol. 3B, HWP request); intel_pstate never sets it"
	ruleHWPEnable    = "intel_pstate in active mode with HWP sets IA32_PM_ENABLE bit 0 at init (intel_pstate_hwp_enable()); HWP_REQUEST is ignored while it is clear"
)

type cpuFinding struct {
	cpu int
	f   Finding
}

// findings evaluates the rules on every CPU and merges CPUs that have the
// same finding.
func findings(s *Snapshot) []Finding {
	var raw []cpuFinding
	add := func(cpu int, kind, check, sysfsSays, reg, why string) {
		raw = append(raw, cpuFinding{cpu, Finding{Kind: kind, Check: check, Sysfs: sysfsSays, Register: reg, Explanation: why}})
	}
	ip := s.Driver.IntelPstate
	activeIntel := ip != nil && ip.Status != nil && *ip.Status == "active"
	noTurbo := ip != nil && ip.NoTurbo != nil && *ip.NoTurbo == 1
	for _, g := range s.Groups {
		for _, c := range g.CPUs {
			sy, r := c.Sysfs, c.Registers
			gov := deref(sy.ScalingGovernor)
			if req, caps := r.HWPRequest, r.HWPCapabilities; req != nil {
				if activeIntel && r.HWPEnabled != nil && !*r.HWPEnabled {
					add(c.CPU, KindDisagreement, "hwp_enable", "intel_pstate status active", "IA32_PM_ENABLE.HWP_ENABLE 0", ruleHWPEnable)
				}
				if req.PackageControl {
					add(c.CPU, KindNote, "package_control", "n/a", fmt.Sprintf("HWP_REQUEST %#x: Package_Control set", uint64(req.Raw)), rulePkgControl)
				}
				if activeIntel && gov == "performance" {
					reg := fmt.Sprintf("HWP_REQUEST min %d max %d epp %d", req.Min, req.Max, req.EPP)
					switch {
					case req.EPP != 0 || req.Min != req.Max:
						add(c.CPU, KindDisagreement, "performance_policy", "scaling_governor performance", reg, rulePerformance)
					default:
						add(c.CPU, KindNote, "performance_policy", "scaling_governor performance", reg, rulePerformance+"; "+ruleSDMMinMax+". Set the governor to powersave for energy_performance_preference to take effect")
					}
				} else if sy.EPP != nil && s.Machine.EPPTable != nil {
					if want, ok := s.Machine.EPPTable.Value(*sy.EPP); ok && want != req.EPP {
						add(c.CPU, KindDisagreement, "epp",
							fmt.Sprintf("energy_performance_preference %s (EPP %d in %s)", *sy.EPP, want, s.Machine.EPPTable.Source),
							"HWP_REQUEST.EPP "+eppWithName(req.EPP, *s.Machine.EPPTable), ruleEPPShow)
					}
				}
				if activeIntel && caps != nil {
					checkLimits(c, ip, noTurbo, add)
				}
				if noTurbo && caps != nil && req.Max > caps.Guaranteed {
					add(c.CPU, KindDisagreement, "no_turbo", "intel_pstate/no_turbo 1",
						fmt.Sprintf("HWP_REQUEST.max %d > guaranteed %d", req.Max, caps.Guaranteed), ruleNoTurboMax)
				}
			}
			if r.TurboDisabled != nil && *r.TurboDisabled && ip != nil && ip.NoTurbo != nil && *ip.NoTurbo == 0 {
				add(c.CPU, KindDisagreement, "no_turbo", "intel_pstate/no_turbo 0", "IA32_MISC_ENABLE bit 38 (turbo disable) set", ruleNoTurboMSR)
			}
			if sy.EPB != nil && r.EPB != nil && uint64(*sy.EPB) != uint64(r.EPB.Raw) {
				add(c.CPU, KindDisagreement, "epb", fmt.Sprintf("energy_perf_bias %d", *sy.EPB),
					fmt.Sprintf("IA32_ENERGY_PERF_BIAS %d", uint64(r.EPB.Raw)), ruleEPB)
			}
			boostOff := s.Driver.Boost != nil && *s.Driver.Boost == 0
			if req := r.CPPCReq; req != nil && strings.HasPrefix(deref(sy.ScalingDriver), "amd-pstate") && !boostOff {
				checkAMDLimits(c, add)
			}
			if req := r.CPPCReq; req != nil {
				if gov == "performance" && strings.HasSuffix(deref(sy.ScalingDriver), "-epp") {
					if req.EPP != 0 {
						add(c.CPU, KindDisagreement, "performance_policy", "scaling_governor performance", fmt.Sprintf("CPPC_REQ.EPP %d", req.EPP), ruleAMDPerf)
					}
				} else if sy.EPP != nil {
					if want, ok := AMDEPPTable().Value(*sy.EPP); ok && want != req.EPP {
						add(c.CPU, KindDisagreement, "epp",
							fmt.Sprintf("energy_performance_preference %s (EPP %d)", *sy.EPP, want),
							"CPPC_REQ.EPP "+eppWithName(req.EPP, AMDEPPTable()), ruleAMDEPP)
					}
				}
			}
		}
	}
	return merge(raw)
}

// checkLimits compares scaling_max_freq / scaling_min_freq with
// HWP_REQUEST max / min as intel_pstate_update_perf_limits() derives them:
// the policy limit in kHz becomes a performance level, global limits are
// DIV_ROUND_UP(highest * pct, 100), min is raised to the global minimum and
// kept at or below max. The kHz-to-level conversion uses the CPU's own
// ratio (cpuinfo_max_freq is the highest level, or the guaranteed level
// once no_turbo=1 has capped it), which also holds for hybrid P-cores
// whose levels are not 100 MHz apart. The kernel first rounds the kHz down
// to 100 MHz and then up to a level, so one level either way is allowed.
func checkLimits(c CPU, ip *IntelPstate, noTurbo bool, add func(int, string, string, string, string, string)) {
	sy, req, caps := c.Sysfs, c.Registers.HWPRequest, c.Registers.HWPCapabilities
	if sy.CPUInfoMaxKHz == nil || *sy.CPUInfoMaxKHz <= 0 {
		return
	}
	ref := int64(caps.Highest)
	if noTurbo {
		ref = int64(caps.Guaranteed)
	}
	toPerf := func(khz int64) int64 { return (khz*ref + *sy.CPUInfoMaxKHz/2) / *sy.CPUInfoMaxKHz }
	turboMax := int64(caps.Highest) // global limits are in percent of the turbo maximum
	pct := func(p *int64, def int64) int64 {
		if p == nil {
			return def
		}
		return (turboMax**p + 99) / 100 // DIV_ROUND_UP(turbo_max * pct, 100)
	}
	maxPolicy, minPolicy := turboMax, int64(0)
	if sy.ScalingMaxKHz != nil {
		maxPolicy = toPerf(*sy.ScalingMaxKHz)
	}
	if sy.ScalingMinKHz != nil {
		minPolicy = min(toPerf(*sy.ScalingMinKHz), maxPolicy)
	}
	globalMax := pct(ip.MaxPerfPct, turboMax)
	globalMin := min(pct(ip.MinPerfPct, 0), globalMax)
	// The order of intel_pstate_update_perf_limits(): the policy minimum
	// wins over max_perf_pct, the policy maximum over min_perf_pct.
	wantMin := min(max(minPolicy, globalMin), maxPolicy)
	wantMax := max(minPolicy, min(maxPolicy, globalMax))
	wantMin = min(wantMin, wantMax)
	if d := wantMax - int64(req.Max); d > 1 || d < -1 {
		add(c.CPU, KindDisagreement, "scaling_max_freq",
			fmt.Sprintf("scaling_max_freq %d kHz, max_perf_pct %s: level %d", derefInt(sy.ScalingMaxKHz), pctString(ip.MaxPerfPct), wantMax),
			fmt.Sprintf("HWP_REQUEST.max %d", req.Max), ruleMax)
	}
	if deref(sy.ScalingGovernor) == "performance" {
		return // min = max: covered by performance_policy
	}
	if d := wantMin - int64(req.Min); d > 1 || d < -1 {
		add(c.CPU, KindDisagreement, "scaling_min_freq",
			fmt.Sprintf("scaling_min_freq %d kHz, min_perf_pct %s: level %d", derefInt(sy.ScalingMinKHz), pctString(ip.MinPerfPct), wantMin),
			fmt.Sprintf("HWP_REQUEST.min %d", req.Min), ruleMin)
	}
}

func pctString(p *int64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprint(*p)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func derefInt(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// merge joins findings that differ only in their CPU, in order of first
// appearance.
func merge(raw []cpuFinding) []Finding {
	out := []Finding{}
	lists := map[Finding]cpus.List{}
	var order []Finding
	for _, r := range raw {
		if _, ok := lists[r.f]; !ok {
			order = append(order, r.f)
		}
		lists[r.f] = append(lists[r.f], r.cpu)
	}
	for _, f := range order {
		l := lists[f]
		slices.Sort(l)
		f.CPUs = l.String()
		out = append(out, f)
	}
	return out
}

// eppWithName formats a register EPP with its table name, if it has one.
func eppWithName(v uint8, t EPPTable) string {
	name := t.Name(v)
	if name == strconv.Itoa(int(v)) {
		return name
	}
	return fmt.Sprintf("%d (%s)", v, name)
}

// packageFindings compares the powercap zones of each package with
// MSR_PKG_POWER_LIMIT.
func packageFindings(s *Snapshot) []Finding {
	out := []Finding{}
	for _, p := range s.Packages {
		l := p.PowerLimit
		if l == nil {
			continue
		}
		unitW := 0.125
		if p.RAPLUnits != nil {
			unitW = p.RAPLUnits.PowerUnitW
		}
		reg := fmt.Sprintf("MSR_PKG_POWER_LIMIT PL1 %.3f W %f s, PL2 %.3f W %f s", l.PL1W, l.PL1TimeS, l.PL2W, l.PL2TimeS)
		for _, z := range p.Powercap {
			if sameLimits(z, l, unitW) {
				continue
			}
			f := Finding{Kind: KindDisagreement, Check: "power_limit", CPUs: p.CPUs, Register: reg, Explanation: rulePowercap,
				Sysfs: fmt.Sprintf("powercap %s PL1 %s W %s s, PL2 %s W %s s", z.Zone, fl(z.PL1W), secs(z.PL1TimeS), fl(z.PL2W), secs(z.PL2TimeS))}
			if z.Interface == "mmio" {
				f.Kind, f.Check, f.Explanation = KindNote, "power_limit_mmio", rulePowercapMMIO
			}
			out = append(out, f)
		}
	}
	return out
}

// sameLimits compares a zone with the register: watts within half a power
// unit, time windows within 1% (the kernel's time unit is whole µs, 976
// for 1/1024 s).
func sameLimits(z PowercapLimits, l *PowerLimit, unitW float64) bool {
	w := func(p *float64, v float64) bool { return p == nil || math.Abs(*p-v) <= unitW/2 }
	t := func(p *float64, v float64) bool { return p == nil || v == 0 || math.Abs(*p-v)/v <= 0.01 }
	return w(z.PL1W, l.PL1W) && w(z.PL2W, l.PL2W) && t(z.PL1TimeS, l.PL1TimeS) && t(z.PL2TimeS, l.PL2TimeS)
}

func fl(p *float64) string {
	if p == nil {
		return na
	}
	return strconv.FormatFloat(*p, 'f', 3, 64)
}

// checkAMDLimits compares scaling_max_freq / scaling_min_freq with CPPC_REQ
// max / min as amd_pstate_update_min_max_limit() derives them:
// level = kHz x highest_perf / max_freq, where highest_perf is the driver's
// (amd_pstate_highest_perf: with preferred cores it is not the per-core
// CAP1 value) and max_freq is cpuinfo_max_freq; min is kept at or above
// CAP1.lowest. Newer kernels convert through the nominal level and
// frequency (freq_to_perf(), clamped to lowest..highest), which lands within
// one level of this; one level either way is allowed. With boost off some
// kernels scale by nominal_perf instead, so the caller skips the check then;
// under the performance policy newer kernels set min to nominal_perf, so
// min is not compared there.
func checkAMDLimits(c CPU, add func(int, string, string, string, string, string)) {
	sy, req, caps := c.Sysfs, c.Registers.CPPCReq, c.Registers.CPPCCap1
	if sy.AMDHighestPerf == nil || sy.CPUInfoMaxKHz == nil || *sy.CPUInfoMaxKHz <= 0 {
		return
	}
	toPerf := func(khz int64) int64 { return khz * *sy.AMDHighestPerf / *sy.CPUInfoMaxKHz }
	lowest := int64(0)
	if caps != nil {
		lowest = int64(caps.Lowest)
	}
	var wantMax, wantMin int64 = -1, -1
	if sy.ScalingMinKHz != nil {
		wantMin = max(toPerf(*sy.ScalingMinKHz), lowest)
	}
	if sy.ScalingMaxKHz != nil {
		wantMax = max(toPerf(*sy.ScalingMaxKHz), wantMin)
		if d := wantMax - int64(req.Max); d > 1 || d < -1 {
			add(c.CPU, KindDisagreement, "scaling_max_freq",
				fmt.Sprintf("scaling_max_freq %d kHz, amd_pstate_highest_perf %d: level %d", *sy.ScalingMaxKHz, *sy.AMDHighestPerf, wantMax),
				fmt.Sprintf("CPPC_REQ.max %d", req.Max), ruleAMDLimits)
		}
	}
	if wantMin >= 0 && deref(sy.ScalingGovernor) != "performance" {
		if d := wantMin - int64(req.Min); d > 1 || d < -1 {
			add(c.CPU, KindDisagreement, "scaling_min_freq",
				fmt.Sprintf("scaling_min_freq %d kHz, amd_pstate_highest_perf %d: level %d", *sy.ScalingMinKHz, *sy.AMDHighestPerf, wantMin),
				fmt.Sprintf("CPPC_REQ.min %d", req.Min), ruleAMDLimits)
		}
	}
}
