// SPDX-License-Identifier: Apache-2.0

package source

import (
	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpuid"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
)

// IA32_HWP_STATUS (0x777) is a per-logical-CPU register that exists where
// CPUID.06H:EAX bit 7 enumerates HWP (SDM vol. 3B, "Hardware-Controlled
// Performance States"). Its bits are sticky: the processor sets them and
// only software clears them, by writing 0. hwpprobe never writes it, so a
// sample's Excursion_To_Minimum bit says the delivered performance fell
// below the request's minimum at some time since the register was last
// cleared (by reset, or by intel_pstate's notify_hwp_interrupt() in
// drivers/cpufreq/intel_pstate.c, which writes 0 after a guaranteed or
// highest performance change notification), possibly before the sample's
// interval.

// probeHWPStatus decides whether IA32_HWP_STATUS is sampled: HWP must be
// enumerated on the first CPU (when its CPUID can be read; without id or
// with an unreadable leaf 6, the register probe alone decides) and the
// register must read there.
func (s *Set) probeHWPStatus(id cpuid.Reader) {
	st := &s.setup
	c0 := st.CPUs[0].CPU
	if id != nil {
		if r, err := id.CPUID(c0, 6, 0); err == nil && !cpuid.DecodePowerFeatures(r).HWP {
			s.note("HWP_STATUS", "CPUID.06H:EAX bit 7 is clear on cpu%d: the CPU does not enumerate HWP, so IA32_HWP_STATUS (0x777) does not exist", c0)
			return
		}
	}
	if _, err := s.probeMSR(c0, hwp.MSR_IA32_HWP_STATUS); err != nil {
		s.note("HWP_STATUS", "%s", msrReason("IA32_HWP_STATUS (0x777)", err))
		return
	}
	st.HWPStatus = sampler.SrcMSR
}

// readHWPStatus reads one CPU's IA32_HWP_STATUS when it is sampled.
func (s *Set) readHWPStatus(cpu int, rc *sampler.RawCPU) {
	if s.setup.HWPStatus == sampler.SrcNone {
		return
	}
	var ok bool
	if rc.HWPStatus, ok = s.readMSR(cpu, hwp.MSR_IA32_HWP_STATUS); !ok {
		rc.Bad |= sampler.BadHWPStatus
	}
}

// probeLimitTable names the bits of MSR_CORE_PERF_LIMIT_REASONS for the
// CPU model that CPUID leaf 1 gives, when the register is sampled and
// the SDM's client table covers the model (hwp.SDMCoreLimitTable).
func (s *Set) probeLimitTable(id cpuid.Reader) {
	st := &s.setup
	if st.LimitReasons == sampler.SrcNone || id == nil {
		return
	}
	c0 := st.CPUs[0].CPU
	v, err := id.CPUID(c0, cpuid.LeafVendor, 0)
	if err != nil || cpuid.Vendor(v) != "GenuineIntel" {
		return
	}
	r, err := id.CPUID(c0, 1, 0)
	if err != nil {
		return
	}
	sig := cpuid.DecodeSignature(r.EAX)
	if t, ok := hwp.SDMCoreLimitTable(sig.Family, sig.Model); ok {
		st.LimitTable = &t
	}
}
