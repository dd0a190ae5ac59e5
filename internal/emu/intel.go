// SPDX-License-Identifier: Apache-2.0

package emu

import (
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/hwpprobe/hwpprobe/hwp"
)

// Registers the model reads or writes (Intel SDM vol. 4; AMD PPR).
const (
	msrPlatformInfo    = 0xCE
	msrPerfCtl         = 0x199
	msrMiscEnable      = 0x1A0
	msrEPB             = 0x1B0
	msrHWPCapabilities = 0x771
	msrHWPRequest      = 0x774
	msrCPPCCap1        = 0xC00102B0
	msrCPPCReq         = 0xC00102B3
)

// perfCtlScaling is intel_pstate's cpu->pstate.perf_ctl_scaling: one
// PERF_CTL ratio step is 100 MHz (100000 kHz).
const perfCtlScaling = 100000

// intelGlobal is intel_pstate's struct global plus the driver state its
// sysfs files show (drivers/cpufreq/intel_pstate.c).
type intelGlobal struct {
	noTurbo       bool
	turboDisabled bool // IA32_MISC_ENABLE bit 38 (turbo_is_disabled())
	minPerfPct    int
	maxPerfPct    int
	dynamicBoost  int
}

// Energy preference strings, index = EPP_INDEX_* (intel_pstate.c
// energy_perf_strings; amd-pstate.c uses the same list).
var energyPerfStrings = []string{"default", "performance", "balance_performance", "balance_power", "power"}

// eppValues is epp_values[] indexed like energyPerfStrings (index 0 unused).
func (m *Machine) eppValues() []int {
	t := m.desc.Driver.EPPTable
	return []int{0, t.Performance, t.BalancePerformance, t.BalancePower, t.Power}
}

// pstates are intel_pstate's cpu->pstate values for a CPU.
type pstates struct {
	turbo, max, min    int // HWP units: Highest, Guaranteed, min from PLATFORM_INFO
	scaling            int // kHz per HWP unit
	turboFreq, maxFreq int // kHz
	minFreq            int
}

// intelPstates follows intel_pstate_get_cpu_pstates() with
// __intel_pstate_get_hwp_cap() (max_pstate = Guaranteed, turbo_pstate =
// Highest), core_get_min_pstate() (MSR_PLATFORM_INFO bits 47:40) and, on
// hybrid parts, intel_pstate_hybrid_hwp_adjust(): turbo_freq and max_freq
// rounded down to 100 MHz, min_freq = min ratio x 100 MHz, min_pstate
// converted to HWP units.
func (m *Machine) intelPstates(c *cpu) pstates {
	v, _ := m.constMSR(c, msrHWPCapabilities)
	caps := hwp.DecodeCapabilities(v)
	plat, _ := m.constMSR(c, msrPlatformInfo)
	p := pstates{turbo: int(caps.Highest), max: int(caps.Guaranteed), scaling: c.ct.PerfKHz}
	minRatio := int(hwp.DecodePlatformInfo(plat).MaxEfficiencyRatio)
	p.turboFreq = p.turbo * p.scaling / perfCtlScaling * perfCtlScaling
	p.maxFreq = p.max * p.scaling / perfCtlScaling * perfCtlScaling
	p.minFreq = minRatio * perfCtlScaling
	p.min = minRatio
	if p.scaling != perfCtlScaling {
		p.min = p.freqToHWP(p.minFreq)
	}
	return p
}

// freqToHWP is intel_pstate_freq_to_hwp() (CPUFREQ_RELATION_L: round up),
// with its exact matches for turbo_freq and max_freq.
func (p pstates) freqToHWP(freq int) int {
	switch freq {
	case p.turboFreq:
		return p.turbo
	case p.maxFreq:
		return p.max
	}
	return (freq + p.scaling - 1) / p.scaling
}

func (m *Machine) intelInit() error {
	misc, _ := m.constMSR(m.cpus[0], msrMiscEnable)
	g := &m.intel
	g.turboDisabled = misc&(1<<38) != 0
	g.noTurbo = g.turboDisabled
	g.maxPerfPct = 100
	g.minPerfPct = m.minPerfPctMin()
	for _, c := range m.cpus {
		if !c.online {
			continue
		}
		c.governor = m.desc.Driver.Governor
		c.qosMax = 1<<31 - 1 // FREQ_QOS_MAX_DEFAULT_VALUE
		// intel_pstate_hwp_enable(): with a model EPP table the driver
		// writes epp_values[BALANCE_PERFORMANCE] as the default; otherwise
		// the firmware's EPP becomes epp_default.
		epp := int(c.regs[msrHWPRequest] >> 24 & 0xff)
		if bp := m.desc.Driver.EPPTable.BalancePerformance; bp != 0x80 {
			epp = bp
			m.wrmsr(c, msrHWPRequest, setEPP(c.regs[msrHWPRequest], epp))
		}
		c.eppDefault = epp
		m.intelSetPolicy(c)
	}
	return nil
}

func setEPP(req uint64, epp int) uint64 { return req&^(0xff<<24) | uint64(epp&0xff)<<24 }

// minPerfPctMin is min_perf_pct_min(): min_pstate * 100 / turbo_pstate
// of CPU 0, truncated (older kernels rounded up).
func (m *Machine) minPerfPctMin() int {
	p := m.intelPstates(m.cpus[0])
	if p.turbo == 0 {
		return 0
	}
	return p.min * 100 / p.turbo
}

// cpuinfoMax is policy->cpuinfo.max_freq: base with no_turbo, else turbo
// (intel_pstate_update_max_freq()).
func (m *Machine) intelCPUInfoMax(p pstates) int {
	if m.intel.noTurbo {
		return p.maxFreq
	}
	return p.turboFreq
}

// intelSetPolicy runs the cpufreq core's policy refresh and
// intel_pstate_set_policy() for c: the frequency QoS requests are
// verified into policy->min/max (intel_pstate_verify_cpu_policy(),
// cpufreq_verify_within_limits()), intel_pstate_update_perf_limits()
// turns them and the global percentages into min/max_perf_ratio, the
// performance policy writes IA32_PERF_CTL (intel_pstate_max_within_limits)
// and intel_pstate_hwp_set() writes HWP_REQUEST.
func (m *Machine) intelSetPolicy(c *cpu) {
	p := m.intelPstates(c)
	lo, hi := uint64(p.minFreq), uint64(m.intelCPUInfoMax(p))
	c.polMax = clampU(c.qosMax, lo, hi)
	c.polMin = clampU(c.qosMin, lo, c.polMax)

	// intel_pstate_update_perf_limits()
	maxPolicy := int(c.polMax) / perfCtlScaling
	minPolicy := maxPolicy
	if c.polMin != c.polMax {
		minPolicy = min(max(int(c.polMin)/perfCtlScaling, 0), maxPolicy)
	}
	if p.scaling != perfCtlScaling {
		maxPolicy = p.freqToHWP(maxPolicy * perfCtlScaling)
		minPolicy = p.freqToHWP(minPolicy * perfCtlScaling)
	}
	g := m.intel
	globalMax := (p.turbo*g.maxPerfPct + 99) / 100
	globalMin := min(max((p.turbo*g.minPerfPct+99)/100, 0), globalMax)
	c.minPerfRatio = min(max(minPolicy, globalMin), maxPolicy)
	c.maxPerfRatio = max(min(maxPolicy, globalMax), minPolicy)
	c.minPerfRatio = min(c.minPerfRatio, c.maxPerfRatio)

	if c.governor == "performance" {
		// intel_pstate_max_within_limits() -> intel_pstate_set_pstate():
		// core_get_val() puts the ratio in bits 15:8 and, with no_turbo
		// set by the user (not by the BIOS), the IDA-disengage bit 32.
		v := uint64(max(p.min, c.maxPerfRatio)) << 8
		if g.noTurbo && !g.turboDisabled {
			v |= 1 << 32
		}
		m.wrmsr(c, msrPerfCtl, v)
	}
	m.intelHWPSet(c)
}

// intelHWPSet is intel_pstate_hwp_set(): min and max from the perf
// ratios (min = max under performance); on a change of policy the EPP is
// saved and set to 0 entering performance, and restored leaving it if it
// is still 0.
func (m *Machine) intelHWPSet(c *cpu) {
	minR, maxR := c.minPerfRatio, c.maxPerfRatio
	if c.governor == "performance" {
		minR = maxR
	}
	v := c.regs[msrHWPRequest]
	v = v&^0xffff | uint64(minR&0xff) | uint64(maxR&0xff)<<8
	if c.eppPolicy != c.governor {
		c.eppPolicy = c.governor
		if c.governor == "performance" {
			c.eppPowersave = int(v >> 24 & 0xff)
			v = setEPP(v, 0)
		} else if c.eppPowersave >= 0 && v>>24&0xff == 0 {
			v = setEPP(v, c.eppPowersave)
		}
	}
	m.wrmsr(c, msrHWPRequest, v)
}

// intelShowEPP is show_energy_performance_preference() with
// intel_pstate_get_energy_pref_index(): a table value prints its name,
// any other value prints as a number, except 0 when it is not a table
// value, which prints "default" (raw_epp 0 selects index 0).
func (m *Machine) intelShowEPP(c *cpu) string {
	epp := int(c.regs[msrHWPRequest] >> 24 & 0xff)
	vals := m.eppValues()
	for i := 1; i < len(vals); i++ {
		if vals[i] == epp {
			return energyPerfStrings[i]
		}
	}
	if epp != 0 {
		return strconv.Itoa(epp)
	}
	return energyPerfStrings[0]
}

// energyPerfIndex matches the first word written to
// energy_performance_preference against energyPerfStrings (both drivers'
// sysfs_match_string()): its index, or -1 for none; EINVAL for no word or
// one longer than 20 bytes.
func energyPerfIndex(data []byte) (int, error) {
	f := strings.Fields(string(data))
	if len(f) == 0 || len(f[0]) > 20 {
		return -1, syscall.EINVAL
	}
	return slices.Index(energyPerfStrings, f[0]), nil
}

// intelStoreEPP is store_energy_performance_preference() with
// intel_pstate_set_energy_pref_index(): a name from energy_perf_strings
// or a decimal 0..255; "default" is epp_default; any value other than 0
// under the performance policy fails with EBUSY.
func (m *Machine) intelStoreEPP(c *cpu, data []byte) error {
	idx, err := energyPerfIndex(data)
	if err != nil {
		return err
	}
	var epp int
	switch {
	case idx == 0:
		epp = c.eppDefault
	case idx > 0:
		epp = m.eppValues()[idx]
	default:
		// kstrtouint(buf, 10): the whole buffer, one trailing newline.
		v, err := strconv.ParseUint(strings.TrimSuffix(string(data), "\n"), 10, 32)
		if err != nil {
			return syscall.EINVAL
		}
		if v > 255 {
			return syscall.EINVAL
		}
		epp = int(v)
	}
	if epp > 0 && c.governor == "performance" {
		return syscall.EBUSY
	}
	// intel_pstate_set_epp()
	m.wrmsr(c, msrHWPRequest, setEPP(c.regs[msrHWPRequest], epp))
	return nil
}

// parseUint is sscanf("%u"): leading blanks, then digits; anything else
// is EINVAL.
func parseUint(data []byte) (uint64, error) {
	s := strings.TrimLeft(string(data), " \t\n")
	end := 0
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if end == 0 {
		return 0, syscall.EINVAL
	}
	v, err := strconv.ParseUint(s[:end], 10, 32)
	if err != nil {
		return 0, syscall.EINVAL
	}
	return v, nil
}

// intelUpdateAll is intel_pstate_update_policies(): every online CPU's
// policy is refreshed.
func (m *Machine) intelUpdateAll() {
	for _, c := range m.cpus {
		if c.online {
			m.intelSetPolicy(c)
		}
	}
}

// intelStoreNoTurbo is store_no_turbo(): EPERM when the BIOS disabled
// turbo and 0 is written; entering no_turbo squashes min_perf_pct to the
// base share; every policy is refreshed (cpuinfo_max_freq becomes base).
func (m *Machine) intelStoreNoTurbo(data []byte) error {
	v, err := parseUint(data)
	if err != nil {
		return err
	}
	noTurbo := v != 0
	g := &m.intel
	if g.turboDisabled && !noTurbo {
		return syscall.EPERM
	}
	if noTurbo == g.noTurbo {
		return nil
	}
	g.noTurbo = noTurbo
	if noTurbo {
		p := m.intelPstates(m.cpus[0])
		if pct := p.max * 100 / p.turbo; g.minPerfPct > pct {
			g.minPerfPct = pct
		}
	}
	m.intelUpdateAll()
	return nil
}

// intelStorePct is store_min_perf_pct()/store_max_perf_pct():
// min is clamped to [min_perf_pct_min(), max_perf_pct], max to
// [min_perf_pct, 100].
func (m *Machine) intelStorePct(isMax bool, data []byte) error {
	v, err := parseUint(data)
	if err != nil {
		return err
	}
	in := int(min(v, 1000))
	g := &m.intel
	if isMax {
		g.maxPerfPct = min(max(in, g.minPerfPct), 100)
	} else {
		g.minPerfPct = min(max(in, m.minPerfPctMin()), g.maxPerfPct)
	}
	m.intelUpdateAll()
	return nil
}

func clampU(v, lo, hi uint64) uint64 { return min(max(v, lo), hi) }

// storeGovernor is store_scaling_governor() for a setpolicy driver:
// cpufreq_parse_policy() accepts "performance" and "powersave" (case
// insensitive) and nothing else.
func (m *Machine) storeGovernor(c *cpu, data []byte) error {
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return syscall.EINVAL
	}
	gov := strings.ToLower(f[0])
	if gov != "performance" && gov != "powersave" {
		return syscall.EINVAL
	}
	c.governor = gov
	m.setPolicy(c)
	return nil
}

// storeFreq is store_scaling_min_freq()/store_scaling_max_freq(): the
// value becomes the frequency QoS request, the policy is refreshed.
func (m *Machine) storeFreq(c *cpu, isMax bool, data []byte) error {
	v, err := parseUint(data)
	if err != nil {
		return err
	}
	if isMax {
		c.qosMax = v
	} else {
		c.qosMin = v
	}
	m.setPolicy(c)
	return nil
}

func (m *Machine) setPolicy(c *cpu) {
	if m.desc.Driver.Name == "amd-pstate-epp" {
		m.amdSetPolicy(c)
	} else {
		m.intelSetPolicy(c)
	}
}
