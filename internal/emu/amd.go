// SPDX-License-Identifier: Apache-2.0

package emu

import (
	"fmt"
	"strings"
	"syscall"

	"github.com/hwpprobe/hwpprobe/hwp"
)

// amdCaps is MSR_AMD_CPPC_CAP1 (0xC00102B0): lowest 7:0, lowest
// nonlinear 15:8, nominal 23:16, highest 31:24 (the reverse of Intel's
// HWP_CAPABILITIES order).
type amdCapsT struct{ highest, nominal, lowestNonlinear, lowest int }

func (m *Machine) amdCaps(c *cpu) amdCapsT {
	v, _ := m.constMSR(c, msrCPPCCap1)
	d := hwp.DecodeCPPCCap1(v)
	return amdCapsT{highest: int(d.Highest), nominal: int(d.Nominal),
		lowestNonlinear: int(d.LowestNonlinear), lowest: int(d.Lowest)}
}

// amdPerfToFreq is perf_to_freq(): DIV_ROUND_UP(nominal_freq x perf,
// nominal_perf), kHz.
func (m *Machine) amdPerfToFreq(c *cpu, perf int) int {
	cp := m.amdCaps(c)
	nom := c.ct.NominalMHz * 1000
	return (nom*perf + cp.nominal - 1) / cp.nominal
}

// amdFreqToPerf is freq_to_perf(): DIV_ROUND_UP(freq x nominal_perf,
// nominal_freq) clamped to [lowest_perf, highest_perf].
func (m *Machine) amdFreqToPerf(c *cpu, freq int) int {
	cp := m.amdCaps(c)
	nom := c.ct.NominalMHz * 1000
	p := (freq*cp.nominal + nom - 1) / nom
	return min(max(p, cp.lowest), cp.highest)
}

// amdLimits are policy->cpuinfo.min_freq and max_freq
// (amd_pstate_init_freq(): min from _CPC lowest_freq; max from highest
// perf with boost enabled, the nominal frequency without it,
// amd_pstate_cpu_boost_update()).
func (m *Machine) amdLimits(c *cpu) (lo, hi int) {
	if !m.boost {
		return c.ct.LowestMHz * 1000, c.ct.NominalMHz * 1000
	}
	return c.ct.LowestMHz * 1000, m.amdMaxFreq(c)
}

// amdMaxFreq is amd_pstate_max_freq: perf_to_freq(highest_perf).
func (m *Machine) amdMaxFreq(c *cpu) int { return m.amdPerfToFreq(c, m.amdCaps(c).highest) }

// amdStoreBoost is the cpufreq core's store_boost() with amd-pstate's
// set_boost: "%d" of 0 or 1, else EINVAL; every policy's cpuinfo max
// becomes the nominal (off) or maximum (on) frequency and is refreshed.
func (m *Machine) amdStoreBoost(data []byte) error {
	f := strings.Fields(string(data))
	if len(f) == 0 || (f[0] != "0" && f[0] != "1") {
		return syscall.EINVAL
	}
	m.boost = f[0] == "1"
	for _, c := range m.cpus {
		if c.online {
			m.amdSetPolicy(c)
		}
	}
	return nil
}

func (m *Machine) amdInit() error {
	m.boost = m.has("cpb") // core performance boost present: on at start
	for _, c := range m.cpus {
		if !c.online {
			continue
		}
		cp := m.amdCaps(c)
		if cp.nominal == 0 || cp.highest == 0 {
			return fmt.Errorf("%w: %s: CPU %d has no MSR_AMD_CPPC_CAP1 values", ErrDescription, m.desc.Name, c.n)
		}
		c.governor = m.desc.Driver.Governor
		c.qosMax = 1<<31 - 1
		// Since 6.13 the initial minimum is lowest_nonlinear_freq
		// ("Set the initial min_freq to lowest_nonlinear_freq").
		c.qosMin = uint64(m.amdPerfToFreq(c, cp.lowestNonlinear))
		// amd_pstate_epp_cpu_init(): a non-server platform starts in
		// powersave with epp_default = balance_performance.
		c.eppDefault = int(c.regs[msrCPPCReq] >> 24 & 0xff)
		if c.governor == "powersave" {
			c.eppDefault = m.desc.Driver.EPPTable.BalancePerformance
		}
		m.wrmsrIfChanged(c, msrCPPCReq, setEPP(c.regs[msrCPPCReq], c.eppDefault))
		m.amdSetPolicy(c)
	}
	return nil
}

// amdSetPolicy is amd_pstate_epp_set_policy() ->
// amd_pstate_epp_update_limit() with amd_pstate_update_min_max_limit():
// limits from policy min/max through freq_to_perf(); under performance
// min = min(nominal_perf, max_limit_perf) (commit 0c411b39e4f4) and EPP 0;
// otherwise the EPP already in CPPC_REQ is kept. Desired is 0.
func (m *Machine) amdSetPolicy(c *cpu) {
	lo, hi := m.amdLimits(c)
	c.polMax = clampU(c.qosMax, uint64(lo), uint64(hi))
	c.polMin = clampU(c.qosMin, uint64(lo), c.polMax)
	maxP := m.amdFreqToPerf(c, int(c.polMax))
	minP := m.amdFreqToPerf(c, int(c.polMin))
	epp := int(c.regs[msrCPPCReq] >> 24 & 0xff)
	if c.governor == "performance" {
		minP = min(m.amdCaps(c).nominal, maxP)
		epp = 0
	}
	c.minPerfRatio, c.maxPerfRatio = minP, maxP
	m.wrmsrIfChanged(c, msrCPPCReq, uint64(maxP&0xff)|uint64(minP&0xff)<<8|uint64(epp&0xff)<<24)
}

// amdShowEPP is amd-pstate's show_energy_performance_preference(): a
// table value prints its name, anything else is EINVAL.
func (m *Machine) amdShowEPP(c *cpu) (string, error) {
	epp := int(c.regs[msrCPPCReq] >> 24 & 0xff)
	vals := m.eppValues()
	for i := 1; i < len(vals); i++ {
		if vals[i] == epp {
			return energyPerfStrings[i], nil
		}
	}
	return "", syscall.EINVAL
}

// amdStoreEPP is amd-pstate's store_energy_performance_preference(): a
// name only ("default" is epp_default), EBUSY for a non-zero EPP under
// the performance policy.
func (m *Machine) amdStoreEPP(c *cpu, data []byte) error {
	idx, err := energyPerfIndex(data)
	if err != nil {
		return err
	}
	if idx < 0 {
		return syscall.EINVAL
	}
	epp := c.eppDefault
	if idx > 0 {
		epp = m.eppValues()[idx]
	}
	if epp > 0 && c.governor == "performance" {
		return syscall.EBUSY
	}
	m.wrmsrIfChanged(c, msrCPPCReq, setEPP(c.regs[msrCPPCReq], epp))
	return nil
}
