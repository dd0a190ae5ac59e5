// SPDX-License-Identifier: Apache-2.0

package source

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/machine/regs"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
	"github.com/hwpprobe/hwpprobe/rapl"
)

// probeRegisters finds the per-CPU and per-package registers: HWP
// request, EPB, thermal status (with TjMax), limit reasons.
func (s *Set) probeRegisters() {
	st := &s.setup
	c0 := st.CPUs[0].CPU
	// The first request register that reads (Intel's, then AMD's).
	var names []string
	var firstErr error
	for _, r := range regs.Requests() {
		_, err := s.probeMSR(c0, r.Address)
		if err == nil {
			s.hwpReg, st.HWPRequest = r.Address, sampler.SrcMSR
			break
		}
		if firstErr == nil {
			names = append(names, regLabel(r))
			firstErr = err
		} else {
			names = append(names, r.Name)
		}
	}
	if s.hwpReg == 0 {
		s.note("HWP_REQUEST", "%s", msrReason(strings.Join(names, " and "), firstErr))
	}
	st.HWPRegister = s.hwpReg
	if _, err := s.probeMSR(c0, regs.EPB().Address); err == nil {
		st.EPB = sampler.SrcMSR
	} else {
		s.note("EPB", "%s", msrReason(regLabel(regs.EPB()), err))
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

// regLabel names a register as the notes do: "NAME (0xADDRESS)".
func regLabel(r *regs.Register) string { return fmt.Sprintf("%s (0x%X)", r.Name, r.Address) }

// probeSampled finds the catalog's other sampled registers (regs.Sampled):
// those the figures above do not already read. Each that reads on the
// first CPU (package registers: on the first package's CPU) is read every
// interval into RawCPU.Regs or RawPkg.Regs; one that does not is left out
// without a note, as registers of the other vendor are.
func (s *Set) probeSampled() {
	st := &s.setup
	figures := []uint32{regs.EPB().Address, hwp.MSR_IA32_HWP_STATUS, hwp.MSR_IA32_PACKAGE_THERM_STATUS,
		hwp.MSR_CORE_PERF_LIMIT_REASONS, rapl.MSR_PKG_POWER_LIMIT}
	for _, r := range regs.Requests() {
		figures = append(figures, r.Address)
	}
	for _, r := range regs.Sampled() {
		if slices.Contains(figures, r.Address) {
			continue
		}
		if r.Scope == regs.Package {
			if _, err := s.probeMSR(s.pkgs[0].cpu, r.Address); err == nil {
				st.PkgRegs = append(st.PkgRegs, r.Address)
			}
		} else if _, err := s.probeMSR(st.CPUs[0].CPU, r.Address); err == nil {
			st.CPURegs = append(st.CPURegs, r.Address)
		}
	}
}
