// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/kernel/cpuid"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/internal/kernel/topology"
	"github.com/hwpprobe/hwpprobe/msr"
)

// Capability says whether one source of information is available, what
// it gave, or why it is missing and how to get it.
type Capability struct {
	Name      string `json:"name"` // root, msr, cpuid, cpufreq, hwp, intel_pstate, amd_pstate, epb, core_types, emulated
	Available bool   `json:"available"`
	Detail    string `json:"detail"`
	Fix       string `json:"fix,omitempty"`
}

func (b *builder) capabilities(sel cpus.List, topo topology.Topology) []Capability {
	var out []Capability
	add := func(name string, ok bool, detail, fix string) {
		out = append(out, Capability{Name: name, Available: ok, Detail: detail, Fix: fix})
	}
	vm := b.hasFlag("hypervisor")
	if b.s.Emulated != "" {
		add("emulated", true, fmt.Sprintf("this root is the emulated machine %q (hwpemu): every figure below is emulated, not measured", b.s.Emulated), "")
	}
	if b.src.EUID == 0 {
		add("root", true, "running as root", "")
	} else {
		add("root", false, fmt.Sprintf("running as uid %d: /dev/cpu/N/msr and /dev/cpu/N/cpuid need root (CAP_SYS_RAWIO)", b.src.EUID), "run as root: sudo hwpprobe snapshot")
	}

	switch {
	case b.msrErr == nil:
		add("msr", true, "MSRs readable through /dev/cpu/N/msr", "")
	case errors.Is(b.msrErr, msr.ErrNoDriver):
		add("msr", false, "the kernel has no msr driver (CONFIG_X86_MSR is off and there is no msr module): register values are n/a", "use a kernel built with CONFIG_X86_MSR=m or =y")
	case errors.Is(b.msrErr, msr.ErrNoDevice):
		add("msr", false, "/dev/cpu/N/msr is missing: the msr module is not loaded; register values are n/a", "modprobe msr")
	case errors.Is(b.msrErr, msr.ErrPermission):
		add("msr", false, "permission denied opening /dev/cpu/N/msr; register values are n/a", "run as root: sudo hwpprobe snapshot")
	default:
		add("msr", false, fmt.Sprintf("MSRs unreadable: %v; register values are n/a", b.msrErr), "")
	}

	switch {
	case b.cpuidErr == nil:
		add("cpuid", true, "CPUID leaves readable through /dev/cpu/N/cpuid", "")
	case errors.Is(b.cpuidErr, cpuid.ErrNoDevice):
		add("cpuid", false, "/dev/cpu/N/cpuid is missing: core types come from sysfs only", "modprobe cpuid (CONFIG_X86_CPUID)")
	case errors.Is(b.cpuidErr, cpuid.ErrPermission):
		add("cpuid", false, "permission denied opening /dev/cpu/N/cpuid: core types come from sysfs only", "run as root: sudo hwpprobe snapshot")
	default:
		add("cpuid", false, fmt.Sprintf("CPUID unreadable: %v", b.cpuidErr), "")
	}

	if b.cpufreq == len(sel) && len(sel) > 0 {
		add("cpufreq", true, fmt.Sprintf("cpufreq policy on every selected CPU (%s)", b.s.SelectedCPUs), "")
	} else {
		detail := fmt.Sprintf("%d of %d selected CPUs have a cpufreq policy: no scaling driver is registered for the others, so governor, EPP and scaling limits are n/a", b.cpufreq, len(sel))
		fix := "check dmesg for intel_pstate / amd_pstate / acpi-cpufreq, and the kernel command line (intel_pstate=disable, amd_pstate=)"
		if vm {
			detail += "; this is a VM guest (cpuinfo flag hypervisor), and hypervisors do not give guests P-state control"
			fix = "run on bare metal (or on an emulated machine, hwpemu) to see cpufreq"
		}
		add("cpufreq", false, detail, fix)
	}

	if b.intel() {
		if b.hasFlag("hwp") {
			add("hwp", true, "the CPU has HWP (cpuinfo flags: "+flagList(b, "hwp", "hwp_epp", "hwp_pkg_req")+")", "")
		} else {
			detail := "the CPU does not advertise HWP (no hwp flag: CPUID.06H:EAX[7] clear): there is no HWP_REQUEST to read"
			if vm {
				detail += "; hypervisors normally hide HWP from guests"
			}
			add("hwp", false, detail, "")
		}
		ip := b.s.Driver.IntelPstate
		switch {
		case ip == nil && vm:
			add("intel_pstate", false, "/sys/devices/system/cpu/intel_pstate is absent: intel_pstate registers only with HWP or, on a listed model, APERF/MPERF (intel_pstate_cpu_ids[] requires X86_FEATURE_APERFMPERF), and guests usually have neither", "run on bare metal")
		case ip == nil:
			add("intel_pstate", false, "/sys/devices/system/cpu/intel_pstate is absent: intel_pstate is not the scaling driver", "boot without intel_pstate=disable (intel_pstate is built in on most distributions)")
		default:
			add("intel_pstate", true, "intel_pstate status "+orNA(ip.Status), "")
		}
		if b.hasFlag("epb") {
			if b.epbFiles > 0 {
				add("epb", true, "energy_perf_bias present", "")
			} else {
				add("epb", false, "the CPU has EPB but cpuN/power/energy_perf_bias is missing", "")
			}
		} else {
			add("epb", false, "the CPU does not advertise EPB (no epb flag: CPUID.06H:ECX[3] clear)", "")
		}
	}
	if b.amd() {
		ap := b.s.Driver.AMDPstate
		switch {
		case ap == nil:
			add("amd_pstate", false, "/sys/devices/system/cpu/amd_pstate is absent: amd-pstate is not loaded", "boot with amd_pstate=active (needs CPPC enabled in firmware)")
		default:
			add("amd_pstate", true, "amd-pstate status "+orNA(ap.Status), "")
		}
		if !b.hasFlag("cppc") {
			add("cppc", false, "the CPU does not advertise MSR-based CPPC (no cppc flag): CPPC registers are not read", "")
		}
	}
	if b.intel() || b.amd() {
		if len(b.zones) > 0 {
			var ids []string
			for _, z := range b.zones {
				ids = append(ids, z.ID)
			}
			add("powercap", true, "RAPL zones "+strings.Join(ids, " "), "")
		} else {
			detail, fix := "no /sys/class/powercap/intel-rapl:* zone: the intel_rapl_msr driver is not loaded", "modprobe intel_rapl_msr"
			if vm {
				detail, fix = detail+"; VM guests have no RAPL", ""
			}
			add("powercap", false, detail, fix)
		}
	}
	switch topo.Source {
	case topology.SourceCPUID:
		add("core_types", true, "hybrid core types from CPUID leaf 0x1A, LP E-cores from leaf 4", "")
	case topology.SourceSysfs:
		add("core_types", true, "hybrid core types from /sys/devices/cpu_core and cpu_atom, LP E-cores from cache/index*/level", "")
	}
	return out
}

func flagList(b *builder, flags ...string) string {
	var have []string
	for _, f := range flags {
		if b.hasFlag(f) {
			have = append(have, f)
		}
	}
	if len(have) == 0 {
		return "none"
	}
	return strings.Join(have, " ")
}

func orNA(s *string) string {
	if s == nil {
		return "n/a"
	}
	return *s
}
