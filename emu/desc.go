package emu

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// ErrDescription is wrapped by every error about a machine description
// (YAML syntax, unknown fields, inconsistent values).
var ErrDescription = errors.New("invalid machine description")

// Description is a machine description, the declarative YAML format of
// emu/machines/*.yaml; docs/emulator.md documents every field. Values that
// are not published figures carry "assumed" in their source text.
type Description struct {
	Name         string `yaml:"name"`
	Summary      string `yaml:"summary"`
	Vendor       string `yaml:"vendor"` // GenuineIntel or AuthenticAMD
	Family       int    `yaml:"family"`
	Model        int    `yaml:"model"`
	Stepping     int    `yaml:"stepping"`
	Microcode    uint32 `yaml:"microcode"`
	Brand        string `yaml:"brand"`
	TSCMHz       int    `yaml:"tsc_mhz"` // TSC and MPERF rate; CPUID 0x16 base
	MaxMHz       int    `yaml:"max_mhz"` // CPUID 0x16 EBX
	BusMHz       int    `yaml:"bus_mhz"`
	CPUIDLevel   int    `yaml:"cpuid_level"`
	AddressSizes string `yaml:"address_sizes"`
	// Flags is the /proc/cpuinfo flags line, in the kernel's order.
	Flags []string `yaml:"flags"`
	// PowerManagement is the /proc/cpuinfo "power management" line (AMD).
	PowerManagement string `yaml:"power_management"`
	// Hypervisor: CPUID leaf 1 ECX bit 31 (a guest).
	Hypervisor bool `yaml:"hypervisor"`
	// KernelMax is sys/devices/system/cpu/kernel_max, NR_CPUS - 1 of the
	// emulated kernel (default 8191, the x86-64 distribution value).
	KernelMax int `yaml:"kernel_max"`
	// Devices: which /dev/cpu/N files exist ("msr", "cpuid").
	Devices []string `yaml:"devices"`

	Packages  int                  `yaml:"packages"`
	Cores     []CoreGroup          `yaml:"cores"` // per package, in CPU-number order
	CoreTypes map[string]*CoreType `yaml:"core_types"`
	Offline   []int                `yaml:"offline"` // CPU numbers that are offline

	Driver Driver `yaml:"driver"`
	Power  Power  `yaml:"power"`
	RAPL   RAPL   `yaml:"rapl"`
	// MSRs lists every register the machine implements; any other
	// address reads as EIO, like a #GP in the real driver.
	MSRs []MSR `yaml:"msrs"`
}

// CoreGroup is a run of identical cores within a package.
type CoreGroup struct {
	Type    string `yaml:"type"`    // a key of CoreTypes
	Count   int    `yaml:"count"`   // cores
	Threads int    `yaml:"threads"` // logical CPUs per core (1 or 2)
}

// CoreType describes one kind of core (hybrid parts have several).
type CoreType struct {
	// CPUIDCoreType is CPUID leaf 0x1A EAX bits 31:24 (0x40 Core, 0x20
	// Atom); 0 on non-hybrid parts (leaf 0x1A absent).
	CPUIDCoreType int `yaml:"cpuid_core_type"`
	NativeModelID int `yaml:"native_model_id"` // leaf 0x1A EAX bits 23:0
	// Sysfs is the hybrid PMU directory listing these cores:
	// "cpu_core" or "cpu_atom" (empty on non-hybrid parts).
	Sysfs string `yaml:"sysfs"`
	// PerfKHz is the frequency of one HWP or CPPC performance unit in
	// kHz (intel_pstate's cpu->pstate.scaling; 100000 on non-hybrid
	// Intel parts). AMD: computed from NominalMHz and the CPPC nominal
	// performance, so leave it 0.
	PerfKHz int `yaml:"perf_khz"`
	// NominalMHz and LowestMHz are the ACPI _CPC nominal and lowest
	// frequencies amd-pstate reads (AMD only).
	NominalMHz int `yaml:"nominal_mhz"`
	LowestMHz  int `yaml:"lowest_mhz"`
	// ActiveW is the power of one busy CPU of this type running at its
	// guaranteed (Intel) or nominal (AMD) performance; see Power.
	ActiveW float64 `yaml:"active_w"`
	Caches  []Cache `yaml:"caches"`
}

// Cache is one CPUID leaf 4 / sysfs cache/indexK entry.
type Cache struct {
	Level int    `yaml:"level"`
	Type  string `yaml:"type"` // Data, Instruction, Unified
	SizeK int    `yaml:"size_k"`
	Ways  int    `yaml:"ways"`
	// SharedBy is how many logical CPUs share one instance: "thread",
	// "core" (SMT siblings), "module:N" (N consecutive cores of the
	// group, e.g. an E-core module's L2) or "package".
	SharedBy string `yaml:"shared_by"`
}

// Driver is the cpufreq driver and its initial settings.
type Driver struct {
	// Name: intel_pstate, amd-pstate-epp, or empty for none (no cpufreq
	// directory at all, like these VMs).
	Name     string `yaml:"name"`
	Status   string `yaml:"status"`   // intel_pstate/status, amd_pstate/status
	Governor string `yaml:"governor"` // initial scaling_governor
	// EPPTable maps energy_performance_preference strings to EPP values
	// (intel_pstate epp_values after intel_epp_default; amd-pstate's
	// AMD_CPPC_EPP_* constants).
	EPPTable EPPTable `yaml:"epp_table"`
	// EPBNormal is the value intel_epb.c writes for "normal" (6, or 7 on
	// the models listed in intel_epb_normal[]).
	EPBNormal int `yaml:"epb_normal"`
}

// EPPTable holds the EPP value of each named preference.
type EPPTable struct {
	Performance        int `yaml:"performance"`
	BalancePerformance int `yaml:"balance_performance"`
	BalancePower       int `yaml:"balance_power"`
	Power              int `yaml:"power"`
}

// Power is the machine's power model (docs/emulator.md, "Power model"):
// package watts = IdleW + UncoreW x (any CPU busy) + the sum over CPUs of
// busy x ActiveW x (f / f_ref)^Exponent.
type Power struct {
	IdleW     float64 `yaml:"idle_w"`      // per package, all CPUs idle
	UncoreW   float64 `yaml:"uncore_w"`    // per package, scaled by mean busy
	Exponent  float64 `yaml:"exponent"`    // frequency exponent (P ~ f·V², V ~ f)
	DRAMW     float64 `yaml:"dram_w"`      // per package DRAM domain, idle
	DRAMBusyW float64 `yaml:"dram_busy_w"` // extra DRAM watts at 100% mean busy
	PlatformW float64 `yaml:"platform_w"`  // psys = packages + this
}

// RAPL names the energy domains and where their counters live.
type RAPL struct {
	// Domains: any of pkg, core, uncore, dram, psys. Each is served as
	// its energy status MSR (if listed in MSRs with kind energy:<d>) and
	// as a powercap zone.
	Domains []string `yaml:"domains"`
	// UnitMSR is the RAPL power unit register (0x606 Intel, 0xC0010299
	// AMD); its bits 12:8 give the energy unit.
	UnitMSR uint32 `yaml:"unit_msr"`
	// LimitMSR is MSR_PKG_POWER_LIMIT (0x610) for powercap constraints;
	// 0 for none (AMD).
	LimitMSR uint32 `yaml:"limit_msr"`
}

// MSR is one implemented register.
type MSR struct {
	Addr uint32 `yaml:"msr"`
	Name string `yaml:"name"`
	// Value is the constant value, or the initial value of a register the
	// model changes (HWP_REQUEST, EPB, CPPC_REQ).
	Value uint64 `yaml:"value"`
	// Kind is empty for a constant; otherwise one of: tsc, mperf, aperf,
	// idle (C-state residency: idle fraction x TSC), hwp_request, epb,
	// perf_ctl, perf_status, cppc_req, energy:<domain>, or energy:thiscore
	// (AMD's per-core energy register: the reading CPU's core only).
	Kind string `yaml:"kind"`
	// CoreType restricts the entry to CPUs of that type (per-core-type
	// HWP capabilities); empty applies to all.
	CoreType string `yaml:"core_type"`
	Source   string `yaml:"source"`
}

var msrKinds = []string{"", "tsc", "mperf", "aperf", "idle", "hwp_request", "epb", "perf_ctl", "perf_status", "cppc_req",
	"energy:pkg", "energy:core", "energy:uncore", "energy:dram", "energy:psys", "energy:thiscore"}

// ParseDescription decodes and checks a YAML machine description. Unknown
// fields are an error so that a typo never silently drops a value.
func ParseDescription(data []byte) (*Description, error) {
	var d Description
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDescription, err)
	}
	if err := d.validate(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrDescription, d.Name, err)
	}
	return &d, nil
}

func (d *Description) validate() error {
	if d.Name == "" {
		return errors.New("name is empty")
	}
	if d.Vendor != "GenuineIntel" && d.Vendor != "AuthenticAMD" {
		return fmt.Errorf("vendor %q: want GenuineIntel or AuthenticAMD", d.Vendor)
	}
	if d.Packages < 1 {
		return fmt.Errorf("packages = %d: want at least 1", d.Packages)
	}
	if d.TSCMHz <= 0 {
		return fmt.Errorf("tsc_mhz = %d: want > 0", d.TSCMHz)
	}
	if len(d.Cores) == 0 {
		return errors.New("no cores")
	}
	for _, g := range d.Cores {
		ct, ok := d.CoreTypes[g.Type]
		if !ok {
			return fmt.Errorf("cores: unknown core type %q", g.Type)
		}
		if g.Count < 1 || g.Threads < 1 || g.Threads > 2 {
			return fmt.Errorf("cores: type %s: count %d threads %d", g.Type, g.Count, g.Threads)
		}
		if d.Driver.Name == "intel_pstate" && ct.PerfKHz <= 0 {
			return fmt.Errorf("core type %s: perf_khz must be > 0 for intel_pstate", g.Type)
		}
		if d.Driver.Name == "amd-pstate-epp" && (ct.NominalMHz <= 0 || ct.LowestMHz <= 0) {
			return fmt.Errorf("core type %s: nominal_mhz and lowest_mhz must be > 0 for amd-pstate", g.Type)
		}
	}
	switch d.Driver.Name {
	case "", "intel_pstate", "amd-pstate-epp":
	default:
		return fmt.Errorf("driver %q: want intel_pstate, amd-pstate-epp or empty", d.Driver.Name)
	}
	if d.Driver.Name != "" && d.Driver.Governor != "performance" && d.Driver.Governor != "powersave" {
		return fmt.Errorf("driver governor %q: want performance or powersave", d.Driver.Governor)
	}
	seen := map[string]bool{}
	for _, m := range d.MSRs {
		if !slices.Contains(msrKinds, m.Kind) {
			return fmt.Errorf("msr %#x: unknown kind %q", m.Addr, m.Kind)
		}
		if m.CoreType != "" && d.CoreTypes[m.CoreType] == nil {
			return fmt.Errorf("msr %#x: unknown core type %q", m.Addr, m.CoreType)
		}
		if m.Source == "" {
			return fmt.Errorf("msr %#x (%s): no source", m.Addr, m.Name)
		}
		key := fmt.Sprintf("%x/%s", m.Addr, m.CoreType)
		if seen[key] {
			return fmt.Errorf("msr %#x listed twice for core type %q", m.Addr, m.CoreType)
		}
		seen[key] = true
	}
	for _, dom := range d.RAPL.Domains {
		if !slices.Contains([]string{"pkg", "core", "uncore", "dram", "psys"}, dom) {
			return fmt.Errorf("rapl domain %q", dom)
		}
	}
	if len(d.RAPL.Domains) > 0 && !seen[fmt.Sprintf("%x/", d.RAPL.UnitMSR)] {
		return fmt.Errorf("rapl unit_msr %#x is not in msrs", d.RAPL.UnitMSR)
	}
	for _, dev := range d.Devices {
		if dev != "msr" && dev != "cpuid" {
			return fmt.Errorf("devices: %q", dev)
		}
	}
	return nil
}
