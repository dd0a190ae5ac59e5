// SPDX-License-Identifier: Apache-2.0

package emu

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/emu/fusefs"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
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
	// Thermal is the package temperature model (docs/emulator.md,
	// "Thermal model"); absent: temperatures are not modelled.
	Thermal *Thermal `yaml:"thermal,omitempty"`
	// MSRs lists every register the machine implements; any other
	// address reads as EIO, like a #GP in the real driver.
	MSRs []MSR `yaml:"msrs"`

	// CPUID entries answer their leaves verbatim, overriding what the
	// model derives from the fields above, leaf by leaf (captured
	// machines list every leaf the CPU implements).
	CPUID []CPUIDEntry `yaml:"cpuid,omitempty"`
	// Captured says where and when `hwpprobe capture` read the machine.
	Captured *Captured `yaml:"captured,omitempty"`
	// Unreadable lists what the capture could not read, and why; none of
	// it is served.
	Unreadable []Unreadable `yaml:"unreadable,omitempty"`
	// Files, when present, replace the model's sysfs and /proc files:
	// the tree then holds exactly these files, served verbatim, plus the
	// live ones (/dev/cpu/N devices, /proc/stat, the emulated marker and
	// the model variant).
	Files []FileEntry `yaml:"files,omitempty"`
}

// Captured is the provenance of a captured description.
type Captured struct {
	Host   string `yaml:"host"`   // the host name
	Kernel string `yaml:"kernel"` // uname release and version
	Date   string `yaml:"date"`   // RFC 3339, UTC
	EUID   int    `yaml:"euid"`   // the effective user the capture ran as
	Tool   string `yaml:"tool"`   // the program and version that wrote it
	// Emulated names the emulated machine the capture read, when it ran
	// under hwpemu (the marker file was present): then host and kernel
	// are those of the machine hwpemu ran on.
	Emulated string `yaml:"emulated,omitempty"`
}

// Unreadable is one path (or register, or CPUID range) a capture could
// not read.
type Unreadable struct {
	Path  string `yaml:"path"`
	Error string `yaml:"error"`
}

// FileEntry is one file, symbolic link or directory served verbatim.
// Exactly one of Content (with Mode), Link or Dir applies.
type FileEntry struct {
	Path    string `yaml:"path"`              // relative to the system root, e.g. proc/cpuinfo
	Mode    string `yaml:"mode,omitempty"`    // permission bits in octal, e.g. "0444"
	Content string `yaml:"content,omitempty"` // the bytes a read returns
	Link    string `yaml:"link,omitempty"`    // a symbolic link's target
	Dir     bool   `yaml:"dir,omitempty"`     // an (empty) directory
}

// CPUIDEntry is one leaf (and subleaf) as the listed CPUs answer it.
type CPUIDEntry struct {
	Leaf uint32 `yaml:"leaf"`
	// Subleaf is nil for a leaf that ignores ECX: every subleaf then
	// answers Regs.
	Subleaf *uint32   `yaml:"subleaf,omitempty"`
	CPUs    string    `yaml:"cpus"` // perf-syntax CPU list
	Regs    [4]uint32 `yaml:"regs"` // EAX, EBX, ECX, EDX
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
	CPUIDCoreType int `yaml:"cpuid_core_type,omitempty"`
	NativeModelID int `yaml:"native_model_id,omitempty"` // leaf 0x1A EAX bits 23:0
	// Sysfs is the hybrid PMU directory listing these cores:
	// "cpu_core" or "cpu_atom" (empty on non-hybrid parts).
	Sysfs string `yaml:"sysfs,omitempty"`
	// PerfKHz is the frequency of one HWP or CPPC performance unit in
	// kHz (intel_pstate's cpu->pstate.scaling; 100000 on non-hybrid
	// Intel parts). AMD: computed from NominalMHz and the CPPC nominal
	// performance, so leave it 0.
	PerfKHz int `yaml:"perf_khz,omitempty"`
	// NominalMHz and LowestMHz are the ACPI _CPC nominal and lowest
	// frequencies amd-pstate reads (AMD only).
	NominalMHz int `yaml:"nominal_mhz,omitempty"`
	LowestMHz  int `yaml:"lowest_mhz,omitempty"`
	// ActiveW is the power of one busy CPU of this type running at its
	// guaranteed (Intel) or nominal (AMD) performance; see Power.
	ActiveW float64 `yaml:"active_w,omitempty"`
	// ThermOffsetC is how many °C this type's cores read below the
	// package temperature (thermal model; 0: equal).
	ThermOffsetC float64 `yaml:"therm_offset_c,omitempty"`
	Caches       []Cache `yaml:"caches,omitempty"`
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

// Thermal is a first-order package temperature model: C dT/dt = P -
// (T - AmbientC) / RKPerW, with P the package power.
type Thermal struct {
	AmbientC float64 `yaml:"ambient_c"` // °C around the package
	RKPerW   float64 `yaml:"r_k_per_w"` // package-to-ambient resistance, K/W
	CJPerK   float64 `yaml:"c_j_per_k"` // heat capacity, J/K
	Source   string  `yaml:"source"`    // where the constants come from ("assumed")
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
	// perf_ctl, perf_status, cppc_req, energy:<domain>, energy:thiscore
	// (AMD's per-core energy register: the reading CPU's core only),
	// pkg_power_limit (MSR_PKG_POWER_LIMIT: the limits the model enforces,
	// written through powercap; the address must be rapl.limit_msr),
	// limit_reasons (MSR_CORE_PERF_LIMIT_REASONS as the model sets it),
	// hwp_status (IA32_HWP_STATUS with the model's excursion bit), or
	// therm_status / pkg_therm_status (IA32_THERM_STATUS /
	// IA32_PACKAGE_THERM_STATUS from the thermal model; needs thermal).
	Kind string `yaml:"kind"`
	// CoreType restricts the entry to CPUs of that type (per-core-type
	// HWP capabilities); empty applies to all.
	CoreType string `yaml:"core_type,omitempty"`
	// CPUs restricts the entry to these CPUs (a perf-syntax list), for
	// per-CPU values such as a capture's; it wins over CoreType.
	CPUs   string `yaml:"cpus,omitempty"`
	Source string `yaml:"source"`
}

var msrKinds = []string{"", "tsc", "mperf", "aperf", "idle", "hwp_request", "epb", "perf_ctl", "perf_status", "cppc_req",
	"energy:pkg", "energy:core", "energy:uncore", "energy:dram", "energy:psys", "energy:thiscore",
	"pkg_power_limit", "limit_reasons", "hwp_status", "therm_status", "pkg_therm_status"}

// ParseDescription decodes and checks a YAML machine description. Unknown
// fields are an error so that a typo never silently drops a value. Errors
// are *DescriptionError values (wrapping ErrDescription) naming the line
// and field.
func ParseDescription(data []byte) (*Description, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		line, msg := yamlErrorLine(err.Error())
		return nil, &DescriptionError{Line: line, Field: "yaml", Err: errors.New(msg)}
	}
	if len(root.Content) == 0 {
		return nil, &DescriptionError{Line: lastLine(data), Field: "name", Err: errors.New("missing: the description is empty")}
	}
	var d Description
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&d); err != nil {
		return nil, decodeError(&root, data, err)
	}
	if err := d.validate(); err != nil {
		var fe *fieldError
		if !errors.As(err, &fe) {
			fe = &fieldError{field: "name", err: err}
		}
		return nil, &DescriptionError{Line: fieldLine(root.Content[0], fe.field, lastLine(data)), Field: fe.field, Err: fe.err}
	}
	return &d, nil
}

func (d *Description) validate() error {
	if err := d.validateMachine(); err != nil {
		return err
	}
	if err := d.validateFigures(); err != nil {
		return err
	}
	ncpu := d.NumCPUs()
	if err := d.validateMSRs(ncpu); err != nil {
		return err
	}
	if err := d.validateCPUID(ncpu); err != nil {
		return err
	}
	return d.validateFiles()
}

// NumCPUs is the number of logical CPUs the cores describe.
func (d *Description) NumCPUs() int {
	n := 0
	for _, g := range d.Cores {
		n += g.Count * g.Threads
	}
	return n * d.Packages
}

// maxNameLen bounds a machine's name, which hwpemu prints and puts in its
// mount's source.
const maxNameLen = 256

// CheckName reports why name cannot name a machine, or nil: a name is
// printed on terminals and in mount sources, so it must be 1 to 256
// bytes of printable text, without control characters (escape
// sequences), invalid UTF-8 or other characters OneLine would escape.
func CheckName(name string) error {
	switch {
	case name == "":
		return errors.New("is empty")
	case len(name) > maxNameLen:
		return fmt.Errorf("%d bytes: want at most %d", len(name), maxNameLen)
	case cli.OneLine(name) != name:
		return fmt.Errorf("%q: want printable text (no control characters or escape sequences)", name)
	}
	return nil
}

// maxCPUs bounds a description's CPU count (the kernel's NR_CPUS limit on
// x86-64), so that a typo cannot make the emulator allocate without end.
const maxCPUs = 8192

func (d *Description) validateMachine() error {
	if err := CheckName(d.Name); err != nil {
		return &fieldError{field: "name", err: err}
	}
	if d.Vendor != "GenuineIntel" && d.Vendor != "AuthenticAMD" {
		return fieldErrorf("vendor", "%q: want GenuineIntel or AuthenticAMD", d.Vendor)
	}
	if d.Packages < 1 || d.Packages > maxCPUs {
		return fieldErrorf("packages", "%d: want 1 to %d", d.Packages, maxCPUs)
	}
	if d.TSCMHz <= 0 || d.TSCMHz > 1e6 {
		return fieldErrorf("tsc_mhz", "%d: want 1 to 1000000", d.TSCMHz)
	}
	if d.BusMHz < 0 || (d.CPUIDLevel >= 0x15 && d.Vendor == "GenuineIntel" && d.BusMHz == 0) {
		return fieldErrorf("bus_mhz", "%d: want > 0 (CPUID 0x15 divides by it)", d.BusMHz)
	}
	if len(d.Cores) == 0 {
		return fieldErrorf("cores", "missing: no cores")
	}
	if err := d.validateCores(); err != nil {
		return err
	}
	switch d.Driver.Name {
	case "", "intel_pstate", "amd-pstate-epp":
	default:
		return fieldErrorf("driver.name", "%q: want intel_pstate, amd-pstate-epp or empty", d.Driver.Name)
	}
	if d.Driver.Name != "" && d.Driver.Governor != "performance" && d.Driver.Governor != "powersave" {
		return fieldErrorf("driver.governor", "%q: want performance or powersave", d.Driver.Governor)
	}
	for i, off := range d.Offline {
		if off <= 0 || off >= d.NumCPUs() {
			return fieldErrorf(fmt.Sprintf("offline[%d]", i), "CPU %d: want 1 to %d (CPU 0 cannot be offline)", off, d.NumCPUs()-1)
		}
	}
	for i, dom := range d.RAPL.Domains {
		if !slices.Contains([]string{"pkg", "core", "uncore", "dram", "psys"}, dom) {
			return fieldErrorf(fmt.Sprintf("rapl.domains[%d]", i), "%q: want pkg, core, uncore, dram or psys", dom)
		}
	}
	for i, dev := range d.Devices {
		if dev != "msr" && dev != "cpuid" {
			return fieldErrorf(fmt.Sprintf("devices[%d]", i), "%q: want msr or cpuid", dev)
		}
	}
	return nil
}

// Bounds of the power and thermal figures: beyond any real part (a
// package of 10 kW, air from -50 to 150 °C, a heat sink of 1e9 J/K), yet
// finite, so that the model's sums and exponentials stay finite numbers.
const (
	maxWatts    = 1e4
	maxExponent = 10
	minAmbientC = -50
	maxAmbientC = 150
	maxOffsetC  = 100 // a core type's therm_offset_c, either way
	maxKPerW    = 1e3
	maxJPerK    = 1e9
)

// rangedFigure is one float field of a description and its range.
type rangedFigure struct {
	field  string
	v      float64
	lo, hi float64
}

// validateFigures checks the power model's and the thermal model's
// figures: each a finite number within its range (YAML's .inf and .nan
// decode into a float64, as does -1e308).
func (d *Description) validateFigures() error {
	p := d.Power
	figs := []rangedFigure{{"power.idle_w", p.IdleW, 0, maxWatts}, {"power.uncore_w", p.UncoreW, 0, maxWatts},
		{"power.exponent", p.Exponent, 0, maxExponent}, {"power.dram_w", p.DRAMW, 0, maxWatts},
		{"power.dram_busy_w", p.DRAMBusyW, 0, maxWatts}, {"power.platform_w", p.PlatformW, 0, maxWatts}}
	for _, name := range slices.Sorted(maps.Keys(d.CoreTypes)) {
		if ct := d.CoreTypes[name]; ct != nil {
			figs = append(figs, rangedFigure{"core_types." + name + ".active_w", ct.ActiveW, 0, maxWatts},
				rangedFigure{"core_types." + name + ".therm_offset_c", ct.ThermOffsetC, -maxOffsetC, maxOffsetC})
		}
	}
	if t := d.Thermal; t != nil {
		if !(t.RKPerW > 0 && t.CJPerK > 0 && t.Source != "") {
			return fieldErrorf("thermal", "r_k_per_w and c_j_per_k must be positive and source given")
		}
		figs = append(figs, rangedFigure{"thermal.ambient_c", t.AmbientC, minAmbientC, maxAmbientC},
			rangedFigure{"thermal.r_k_per_w", t.RKPerW, 0, maxKPerW}, rangedFigure{"thermal.c_j_per_k", t.CJPerK, 0, maxJPerK})
	}
	for _, f := range figs {
		if math.IsNaN(f.v) || f.v < f.lo || f.v > f.hi { // ±Inf is outside every range
			return fieldErrorf(f.field, "%v: want a finite number from %g to %g", f.v, f.lo, f.hi)
		}
	}
	return nil
}

func (d *Description) validateCores() error {
	n := 0
	for i, g := range d.Cores {
		f := fmt.Sprintf("cores[%d]", i)
		ct, ok := d.CoreTypes[g.Type]
		if !ok || ct == nil {
			return fieldErrorf(f+".type", "unknown core type %q", g.Type)
		}
		if g.Count < 1 || g.Count > maxCPUs || g.Threads < 1 || g.Threads > 2 {
			return fieldErrorf(f, "type %s: count %d threads %d: want count 1 to %d, threads 1 or 2", g.Type, g.Count, g.Threads, maxCPUs)
		}
		if n += g.Count * g.Threads; n*d.Packages > maxCPUs {
			return fieldErrorf(f+".count", "more than %d CPUs", maxCPUs)
		}
		if d.Driver.Name == "intel_pstate" && ct.PerfKHz <= 0 {
			return fieldErrorf("core_types."+g.Type+".perf_khz", "must be > 0 for intel_pstate")
		}
		if d.Driver.Name == "amd-pstate-epp" && (ct.NominalMHz <= 0 || ct.LowestMHz <= 0) {
			return fieldErrorf("core_types."+g.Type+".nominal_mhz", "nominal_mhz and lowest_mhz must be > 0 for amd-pstate")
		}
	}
	for name, ct := range d.CoreTypes {
		if ct == nil {
			return fieldErrorf("core_types."+name, "empty")
		}
		for i, ca := range ct.Caches {
			f := fmt.Sprintf("core_types.%s.caches[%d]", name, i)
			if err := ca.validate(f); err != nil {
				return err
			}
		}
	}
	return nil
}

// maxCacheK bounds a cache's size_k (1 TiB): far above any cache, and
// small enough that size_k x 1024 cannot overflow.
const maxCacheK = 1 << 30

// maxCacheWays bounds a cache's ways: CPUID leaf 4 EBX bits 31:22 hold
// ways - 1.
const maxCacheWays = 1 << 10

// validate names the field that is wrong: level, size_k or ways, each
// checked against its own range, then size_k against ways.
func (ca Cache) validate(f string) error {
	if ca.Type != "Data" && ca.Type != "Instruction" && ca.Type != "Unified" {
		return fieldErrorf(f+".type", "%q: want Data, Instruction or Unified", ca.Type)
	}
	switch {
	case ca.Level < 1 || ca.Level > 7:
		return fieldErrorf(f+".level", "%d: want 1 to 7", ca.Level)
	case ca.Ways < 1 || ca.Ways > maxCacheWays:
		return fieldErrorf(f+".ways", "%d: want 1 to %d", ca.Ways, maxCacheWays)
	case ca.SizeK < 1 || ca.SizeK > maxCacheK:
		return fieldErrorf(f+".size_k", "%d: want 1 to %d", ca.SizeK, maxCacheK)
	case ca.SizeK*1024%(ca.Ways*64) != 0:
		return fieldErrorf(f+".size_k", "%d KB: want a multiple of ways x 64 bytes (%d ways)", ca.SizeK, ca.Ways)
	}
	switch s := ca.SharedBy; {
	case s == "thread", s == "core", s == "package":
	case strings.HasPrefix(s, "module:"):
		k, err := strconv.Atoi(strings.TrimPrefix(s, "module:"))
		if err != nil || k < 1 {
			return fieldErrorf(f+".shared_by", "%q: want module:N with N >= 1", s)
		}
	default:
		return fieldErrorf(f+".shared_by", "%q: want thread, core, module:N or package", s)
	}
	return nil
}

func (d *Description) validateMSRs(ncpu int) error {
	seen := map[string]bool{}
	perCPU := map[uint32]map[int]bool{}
	for i, m := range d.MSRs {
		f := fmt.Sprintf("msrs[%d]", i)
		if !slices.Contains(msrKinds, m.Kind) {
			return fieldErrorf(f+".kind", "msr %#x: unknown kind %q", m.Addr, m.Kind)
		}
		if m.CoreType != "" && d.CoreTypes[m.CoreType] == nil {
			return fieldErrorf(f+".core_type", "msr %#x: unknown core type %q", m.Addr, m.CoreType)
		}
		if m.Source == "" {
			return fieldErrorf(f+".source", "msr %#x (%s): no source", m.Addr, m.Name)
		}
		if m.Kind == "pkg_power_limit" && (m.Addr != d.RAPL.LimitMSR || m.CoreType != "" || m.CPUs != "") {
			return fieldErrorf(f+".kind", "msr %#x: kind pkg_power_limit needs the address of rapl.limit_msr (%#x), for all CPUs", m.Addr, d.RAPL.LimitMSR)
		}
		if (m.Kind == "therm_status" || m.Kind == "pkg_therm_status") && d.Thermal == nil {
			return fieldErrorf(f+".kind", "msr %#x: kind %s needs a thermal section", m.Addr, m.Kind)
		}
		if m.CPUs != "" {
			l, err := cpuList(m.CPUs, ncpu)
			if err != nil {
				return fieldErrorf(f+".cpus", "msr %#x: %v", m.Addr, err)
			}
			if perCPU[m.Addr] == nil {
				perCPU[m.Addr] = map[int]bool{}
			}
			for _, c := range l {
				if perCPU[m.Addr][c] {
					return fieldErrorf(f+".cpus", "msr %#x listed twice for CPU %d", m.Addr, c)
				}
				perCPU[m.Addr][c] = true
			}
			continue
		}
		key := fmt.Sprintf("%x/%s", m.Addr, m.CoreType)
		if seen[key] {
			return fieldErrorf(f+".msr", "msr %#x listed twice for core type %q", m.Addr, m.CoreType)
		}
		seen[key] = true
	}
	if len(d.RAPL.Domains) > 0 && !seen[fmt.Sprintf("%x/", d.RAPL.UnitMSR)] {
		return fieldErrorf("rapl.unit_msr", "%#x is not in msrs", d.RAPL.UnitMSR)
	}
	return nil
}

// cpuList parses a perf-syntax CPU list and checks it names CPUs of the
// machine.
func cpuList(s string, ncpu int) (cpus.List, error) {
	l, err := cpus.Parse(s)
	if err != nil {
		return nil, err
	}
	if len(l) == 0 {
		return nil, errors.New("empty CPU list")
	}
	if last := l[len(l)-1]; last >= ncpu {
		return nil, fmt.Errorf("CPU %d: the machine has %d CPUs", last, ncpu)
	}
	return l, nil
}

func (d *Description) validateCPUID(ncpu int) error {
	type key struct {
		cpu       int
		leaf, sub uint32
		any       bool
	}
	seen := map[key]bool{}
	for i, e := range d.CPUID {
		f := fmt.Sprintf("cpuid[%d]", i)
		l, err := cpuList(e.CPUs, ncpu)
		if err != nil {
			return fieldErrorf(f+".cpus", "leaf %#x: %v", e.Leaf, err)
		}
		for _, c := range l {
			k := key{cpu: c, leaf: e.Leaf, any: e.Subleaf == nil}
			if e.Subleaf != nil {
				k.sub = *e.Subleaf
			}
			other := key{cpu: c, leaf: e.Leaf, any: !k.any}
			if seen[k] || (k.any && seen[other]) || (!k.any && seen[key{cpu: c, leaf: e.Leaf, any: true}]) {
				return fieldErrorf(f, "leaf %#x subleaf %s listed twice for CPU %d", e.Leaf, subleafText(e.Subleaf), c)
			}
			seen[k] = true
		}
	}
	return nil
}

func subleafText(s *uint32) string {
	if s == nil {
		return "(any)"
	}
	return strconv.FormatUint(uint64(*s), 10)
}

// liveFiles are the paths the model serves even in a captured tree.
var liveFiles = []string{"proc/stat", sysfs.EmulatedMarker, sysfs.EmulatedLoop, VariantPath}

func (d *Description) validateFiles() error {
	kinds := map[string]bool{} // path -> is a directory
	for i, e := range d.Files {
		f := fmt.Sprintf("files[%d]", i)
		if err := checkFilePath(e.Path); err != nil {
			return fieldErrorf(f+".path", "%q: %v", e.Path, err)
		}
		n := 0
		for _, set := range []bool{e.Link != "", e.Dir, e.Mode != ""} {
			if set {
				n++
			}
		}
		if n != 1 {
			return fieldErrorf(f, "%s: want exactly one of mode (a file), link or dir", e.Path)
		}
		if strings.ContainsRune(e.Link, 0) {
			return fieldErrorf(f+".link", "%q: contains a NUL byte, which no link target can", e.Link)
		}
		if e.Mode != "" {
			if m, err := strconv.ParseUint(e.Mode, 8, 32); err != nil || m > 0o777 {
				return fieldErrorf(f+".mode", "%q: want octal permission bits such as 0444", e.Mode)
			}
		}
		if isDir, ok := kinds[e.Path]; ok && !(isDir && e.Dir) {
			return fieldErrorf(f+".path", "%s listed twice", e.Path)
		}
		kinds[e.Path] = e.Dir
		for dir := path.Dir(e.Path); dir != "."; dir = path.Dir(dir) {
			if isDir, ok := kinds[dir]; ok && !isDir {
				return fieldErrorf(f+".path", "%s: %s is not a directory", e.Path, dir)
			}
			kinds[dir] = true
		}
	}
	return nil
}

// checkFilePath accepts clean relative paths below a graft point, other
// than the live files.
func checkFilePath(p string) error {
	if strings.ContainsRune(p, 0) {
		return errors.New("contains a NUL byte, which no file name can")
	}
	if p == "" || path.IsAbs(p) || path.Clean(p) != p || strings.HasPrefix(p, "../") || p == ".." {
		return errors.New("want a clean path relative to the system root")
	}
	if slices.Contains(liveFiles, p) || strings.HasPrefix(p, "dev/") || p == "dev" {
		return errors.New("served by the model, not verbatim")
	}
	for _, g := range fusefs.GraftPoints() {
		if p == g || strings.HasPrefix(p, g+"/") {
			if p == g && !strings.HasPrefix(g, "proc/") {
				return errors.New("a graft point itself is a directory")
			}
			return nil
		}
	}
	return fmt.Errorf("outside the served paths (%s)", strings.Join(fusefs.GraftPoints(), ", "))
}
