// SPDX-License-Identifier: Apache-2.0

package source

import (
	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
	"github.com/hwpprobe/hwpprobe/rapl"
)

// probeRegisters finds the per-CPU and per-package registers: HWP
// request, EPB, thermal status (with TjMax), limit reasons.
func (s *Set) probeRegisters() {
	st := &s.setup
	c0 := st.CPUs[0].CPU
	if _, err := s.probeMSR(c0, hwp.MSR_IA32_HWP_REQUEST); err == nil {
		s.hwpReg, st.HWPRequest = hwp.MSR_IA32_HWP_REQUEST, sampler.SrcMSR
	} else if _, err2 := s.probeMSR(c0, hwp.MSR_AMD_CPPC_REQ); err2 == nil {
		s.hwpReg, st.HWPRequest = hwp.MSR_AMD_CPPC_REQ, sampler.SrcMSR
	} else {
		s.note("HWP_REQUEST", "%s", msrReason("IA32_HWP_REQUEST (0x774) and MSR_AMD_CPPC_REQ", err))
	}
	st.HWPRegister = s.hwpReg
	if _, err := s.probeMSR(c0, hwp.MSR_IA32_ENERGY_PERF_BIAS); err == nil {
		st.EPB = sampler.SrcMSR
	} else {
		s.note("EPB", "%s", msrReason("IA32_ENERGY_PERF_BIAS (0x1B0)", err))
	}
	// TjMax: MSR_TEMPERATURE_TARGET bits 23:16 (turbostat
	// set_temperature_target); without it turbostat assumes 100 °C.
	tj := func(cpu int) (float64, bool) {
		v, err := s.probeMSR(cpu, hwp.MSR_TEMPERATURE_TARGET)
		tt := hwp.DecodeTemperatureTarget(v)
		if err != nil || tt.TjMax == 0 {
			return 100, false
		}
		return float64(tt.TjMax), true
	}
	if _, err := s.probeMSR(c0, hwp.MSR_IA32_THERM_STATUS); err == nil {
		st.CoreTmp = sampler.SrcMSR
		st.TjMax = make([]float64, len(st.CPUs))
		assumed := false
		for i, c := range st.CPUs {
			var ok bool
			st.TjMax[i], ok = tj(c.CPU)
			assumed = assumed || !ok
		}
		if assumed {
			s.note("CoreTmp", "MSR_TEMPERATURE_TARGET (0x1A2) unreadable: TjMax assumed 100 °C as turbostat does")
		}
	} else {
		s.note("CoreTmp", "%s", msrReason("IA32_THERM_STATUS (0x19C)", err))
	}
	p0 := s.pkgs[0].cpu
	if _, err := s.probeMSR(p0, hwp.MSR_IA32_PACKAGE_THERM_STATUS); err == nil {
		st.PkgTmp = sampler.SrcMSR
		st.PkgTjMax = make([]float64, len(s.pkgs))
		for i, p := range s.pkgs {
			st.PkgTjMax[i], _ = tj(p.cpu)
		}
	} else {
		s.note("PkgTmp", "%s", msrReason("IA32_PACKAGE_THERM_STATUS (0x1B1)", err))
	}
	if _, err := s.probeMSR(p0, hwp.MSR_CORE_PERF_LIMIT_REASONS); err == nil {
		st.LimitReasons = sampler.SrcMSR
	} else {
		s.note("LIMIT_REASONS", "%s", msrReason("MSR_CORE_PERF_LIMIT_REASONS (0x64F)", err))
	}
	if _, err := s.probeMSR(p0, rapl.MSR_PKG_POWER_LIMIT); err == nil {
		st.PowerLimit = sampler.SrcMSR
	} else {
		s.note("POWER_LIMIT", "%s", msrReason("MSR_PKG_POWER_LIMIT (0x610)", err))
	}
}
