// SPDX-License-Identifier: Apache-2.0

// Package snapshot builds a one-shot picture of a machine's CPU power
// management: what the kernel presents in sysfs (cpufreq driver, governor,
// EPP string, EPB, scaling limits, intel_pstate / amd-pstate globals) next
// to what the registers hold (HWP_REQUEST, HWP_CAPABILITIES, EPB, AMD CPPC)
// for every CPU, grouped by core type, with package facts (RAPL units, TDP,
// PL1/PL2, TjMax, temperatures, turbo ratios), the places where sysfs and
// the registers disagree with the kernel rule behind each, and a report of
// the capabilities that are missing and how to get them.
//
// Build reads only through the Sources it is given (a sysfs root, an MSR
// reader, a CPUID reader), so tests point it at fixture trees and
// in-memory registers. It never writes anything.
package snapshot

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpuid"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
	"github.com/hwpprobe/hwpprobe/internal/kernel/topology"
	"github.com/hwpprobe/hwpprobe/internal/machine/regs"
	"github.com/hwpprobe/hwpprobe/msr"
	"github.com/hwpprobe/hwpprobe/rapl"
)

// ErrBadCPUList is wrapped by Build's error when the CPU selection is
// invalid: bad syntax, CPUs that do not exist or are offline.
var ErrBadCPUList = errors.New("bad CPU selection")

// Sources are where a snapshot reads from.
type Sources struct {
	FS    sysfs.FS     // the system root for sys/ and proc/
	MSR   msr.Reader   // /dev/cpu/N/msr (msr.Open) or an msr.Map; nil: none
	CPUID cpuid.Reader // /dev/cpu/N/cpuid (cpuid.Open) or a cpuid.Map; nil: none
	// EUID is the effective user id of the reader, used to explain
	// permission failures (os.Geteuid() for the running system).
	EUID int
}

// Hex is a raw register value; JSON carries it as a "0x..." string so that
// 64-bit values survive JSON number parsers.
type Hex uint64

// MarshalText implements encoding.TextMarshaler.
func (h Hex) MarshalText() ([]byte, error) {
	return []byte("0x" + strconv.FormatUint(uint64(h), 16)), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (h *Hex) UnmarshalText(b []byte) error {
	v, err := strconv.ParseUint(string(b), 0, 64)
	*h = Hex(v)
	return err
}

// Snapshot is the whole picture. Optional values are pointers: nil means
// not available ("n/a" in text, null in JSON), never zero.
type Snapshot struct {
	// Emulated names the emulated machine when the root is served by
	// hwpemu; every figure is then emulated.
	Emulated       string       `json:"emulated,omitempty"`
	Machine        Machine      `json:"machine"`
	Driver         Driver       `json:"driver"`
	SelectedCPUs   string       `json:"selected_cpus"`
	OfflineCPUs    string       `json:"offline_cpus,omitempty"`
	Hybrid         bool         `json:"hybrid"`
	CoreTypeSource string       `json:"core_type_source"`
	Groups         []Group      `json:"groups"`
	Packages       []Package    `json:"packages"`
	Findings       []Finding    `json:"findings"`
	Capabilities   []Capability `json:"capabilities"`
	// ReadErrors lists files or registers that exist but failed to read
	// for a reason other than absence.
	ReadErrors []string `json:"read_errors,omitempty"`
}

// Machine identifies the processor, from /proc/cpuinfo.
type Machine struct {
	Vendor    string `json:"vendor"`
	ModelName string `json:"model_name"`
	Family    int    `json:"family"`
	Model     int    `json:"model"`
	Stepping  int    `json:"stepping"`
	Microcode string `json:"microcode"`
	// Flags are the /proc/cpuinfo power-management flags present, among
	// hwp, hwp_notify, hwp_act_window, hwp_epp, hwp_pkg_req, epb,
	// aperfmperf, cppc, hypervisor.
	Flags []string `json:"flags"`
	// EPPTable is the kernel's EPP string table hwpprobe applies to this
	// model, with the source it came from.
	EPPTable *EPPTable `json:"epp_table,omitempty"`
}

// Driver holds the global cpufreq driver state.
type Driver struct {
	IntelPstate *IntelPstate `json:"intel_pstate"`
	AMDPstate   *AMDPstate   `json:"amd_pstate"`
	Boost       *int64       `json:"cpufreq_boost"`
}

// IntelPstate is /sys/devices/system/cpu/intel_pstate.
type IntelPstate struct {
	Status          *string `json:"status"`
	NoTurbo         *int64  `json:"no_turbo"`
	MinPerfPct      *int64  `json:"min_perf_pct"`
	MaxPerfPct      *int64  `json:"max_perf_pct"`
	HWPDynamicBoost *int64  `json:"hwp_dynamic_boost"`
}

// AMDPstate is /sys/devices/system/cpu/amd_pstate.
type AMDPstate struct {
	Status   *string `json:"status"`
	Prefcore *string `json:"prefcore"`
}

// Group is the CPUs of one core type.
type Group struct {
	CoreType string `json:"core_type"`
	CPUList  string `json:"cpu_list"`
	CPUs     []CPU  `json:"cpus"`
}

// CPU is one logical CPU: sysfs next to registers.
type CPU struct {
	CPU       int      `json:"cpu"`
	Package   int      `json:"package"`
	Core      int      `json:"core"`
	CoreType  string   `json:"core_type"`
	Sysfs     CPUSysfs `json:"sysfs"`
	Registers CPURegs  `json:"registers"`
	// Unavailable says, per register name, why it shows n/a (the CPU does
	// not implement it: EIO from the driver).
	Unavailable map[string]string `json:"unavailable,omitempty"`
}

// CPUSysfs is what the kernel presents for one CPU.
type CPUSysfs struct {
	ScalingDriver   *string `json:"scaling_driver"`
	ScalingGovernor *string `json:"scaling_governor"`
	EPP             *string `json:"energy_performance_preference"`
	ScalingMinKHz   *int64  `json:"scaling_min_freq_khz"`
	ScalingMaxKHz   *int64  `json:"scaling_max_freq_khz"`
	CPUInfoMinKHz   *int64  `json:"cpuinfo_min_freq_khz"`
	CPUInfoMaxKHz   *int64  `json:"cpuinfo_max_freq_khz"`
	BaseFreqKHz     *int64  `json:"base_frequency_khz"`
	EPB             *int64  `json:"energy_perf_bias"`
	AMDHighestPerf  *int64  `json:"amd_pstate_highest_perf,omitempty"`
	AMDPrefcoreRank *int64  `json:"amd_pstate_prefcore_ranking,omitempty"`
}

// CPURegs is what the registers of one CPU hold.
type CPURegs struct {
	HWPEnabled      *bool            `json:"hwp_enabled"` // IA32_PM_ENABLE bit 0
	HWPRequest      *HWPRequest      `json:"hwp_request"`
	HWPCapabilities *HWPCapabilities `json:"hwp_capabilities"`
	EPB             *EPB             `json:"energy_perf_bias"`
	// TurboDisabled is IA32_MISC_ENABLE bit 38.
	TurboDisabled *bool `json:"misc_enable_turbo_disable"`
	// TemperatureC is TjMax minus the IA32_THERM_STATUS readout.
	TemperatureC *int      `json:"temperature_c"`
	CPPCEnabled  *bool     `json:"amd_cppc_enable,omitempty"`
	CPPCCap1     *CPPCCap1 `json:"amd_cppc_cap1,omitempty"`
	CPPCReq      *CPPCReq  `json:"amd_cppc_req,omitempty"`
	// HWPStatus is IA32_HWP_STATUS (0x777), read where the CPU has HWP.
	HWPStatus *HWPStatus `json:"hwp_status,omitempty"`
}

// Request returns the CPU's request register in the catalog's
// vendor-neutral form (regs.Request): IA32_HWP_REQUEST where it was read,
// else AMD's CPPC request; false when neither was.
func (r *CPURegs) Request() (regs.Request, bool) {
	switch {
	case r.HWPRequest != nil:
		return regs.RequestFrom(regs.RequestOf(regs.Intel).Address, uint64(r.HWPRequest.Raw))
	case r.CPPCReq != nil:
		return regs.RequestFrom(regs.RequestOf(regs.AMD).Address, uint64(r.CPPCReq.Raw))
	}
	return regs.Request{}, false
}

// HWPRequest is Intel's request register, IA32_HWP_REQUEST (or
// IA32_HWP_REQUEST_PKG), as regs.RequestFrom reads it.
type HWPRequest struct {
	Raw              Hex    `json:"raw"`
	Min              uint8  `json:"min"`
	Max              uint8  `json:"max"`
	Desired          uint8  `json:"desired"`
	EPP              uint8  `json:"epp"`
	ActivityWindowUS uint64 `json:"activity_window_us"`
	PackageControl   bool   `json:"package_control"`
}

// HWPCapabilities is IA32_HWP_CAPABILITIES (0x771).
type HWPCapabilities struct {
	Raw           Hex   `json:"raw"`
	Highest       uint8 `json:"highest"`
	Guaranteed    uint8 `json:"guaranteed"`
	MostEfficient uint8 `json:"most_efficient"`
	Lowest        uint8 `json:"lowest"`
}

// EPB is IA32_ENERGY_PERF_BIAS (regs.EPB).
type EPB struct {
	Raw   Hex    `json:"raw"`
	Value uint8  `json:"value"`
	Name  string `json:"name"` // intel_epb.c name, "" when the value has none
}

// CPPCCap1 is MSR_AMD_CPPC_CAP1 (0xC00102B0).
type CPPCCap1 struct {
	Raw             Hex   `json:"raw"`
	Highest         uint8 `json:"highest"`
	Nominal         uint8 `json:"nominal"`
	LowestNonlinear uint8 `json:"lowest_nonlinear"`
	Lowest          uint8 `json:"lowest"`
}

// CPPCReq is AMD's CPPC request register, as regs.RequestFrom reads it;
// its JSON form lists the fields in register order (maximum first).
type CPPCReq struct {
	Raw     Hex   `json:"raw"`
	Max     uint8 `json:"max"`
	Min     uint8 `json:"min"`
	Desired uint8 `json:"desired"`
	EPP     uint8 `json:"epp"`
}

// Package holds per-package facts, read on the package's first selected
// CPU.
type Package struct {
	Package   int `json:"package"`
	ReadOnCPU int `json:"read_on_cpu"`
	// BaseRatio and MaxEfficiencyRatio come from MSR_PLATFORM_INFO.
	BaseRatio          *uint8      `json:"base_ratio"`
	MaxEfficiencyRatio *uint8      `json:"max_efficiency_ratio"`
	RAPLUnits          *RAPLUnits  `json:"rapl_units"`
	TDPW               *float64    `json:"tdp_w"`
	PowerLimit         *PowerLimit `json:"power_limit"`
	TjMaxC             *int        `json:"tjmax_c"`
	TCCOffsetC         *int        `json:"tcc_offset_c"`
	TemperatureC       *int        `json:"package_temperature_c"`
	// LimitReasons is MSR_CORE_PERF_LIMIT_REASONS (Intel), decoded.
	LimitReasons *LimitReasons `json:"limit_reasons,omitempty"`
	// HWPRequestPkg is IA32_HWP_REQUEST_PKG (0x772), read when the CPU
	// has hwp_pkg_req; it matters for CPUs whose HWP_REQUEST sets
	// Package_Control.
	HWPRequestPkg *HWPRequest `json:"hwp_request_pkg"`
	// TurboRatios are MSR_TURBO_RATIO_LIMIT's groups (Intel).
	TurboRatios []TurboRatio `json:"turbo_ratios"`
	// Powercap are the package's RAPL zones in sysfs (MSR and MMIO
	// interfaces), next to MSR_PKG_POWER_LIMIT above.
	Powercap    []PowercapLimits  `json:"powercap"`
	CPUs        string            `json:"cpus"` // the selected CPUs of this package
	Unavailable map[string]string `json:"unavailable,omitempty"`
}

// PowercapLimits is one powercap zone of a package, in watts and seconds
// (constraint_0 long_term = PL1, constraint_1 short_term = PL2).
type PowercapLimits struct {
	Zone      string   `json:"zone"`      // intel-rapl:0, intel-rapl-mmio:0
	Interface string   `json:"interface"` // msr or mmio
	Enabled   *bool    `json:"enabled"`
	PL1W      *float64 `json:"pl1_w"`
	PL1TimeS  *float64 `json:"pl1_time_s"`
	PL2W      *float64 `json:"pl2_w"`
	PL2TimeS  *float64 `json:"pl2_time_s"`
}

// RAPLUnits is MSR_RAPL_POWER_UNIT (Intel 0x606, AMD 0xC0010299).
type RAPLUnits struct {
	Raw         Hex     `json:"raw"`
	PowerUnitW  float64 `json:"power_unit_w"`
	EnergyUnitJ float64 `json:"energy_unit_j"`
	TimeUnitS   float64 `json:"time_unit_s"`
}

// PowerLimit is MSR_PKG_POWER_LIMIT (0x610).
type PowerLimit struct {
	Raw        Hex     `json:"raw"`
	PL1W       float64 `json:"pl1_w"`
	PL1Enabled bool    `json:"pl1_enabled"`
	PL1Clamp   bool    `json:"pl1_clamp"`
	PL1TimeS   float64 `json:"pl1_time_s"`
	PL2W       float64 `json:"pl2_w"`
	PL2Enabled bool    `json:"pl2_enabled"`
	PL2Clamp   bool    `json:"pl2_clamp"`
	PL2TimeS   float64 `json:"pl2_time_s"`
	Locked     bool    `json:"locked"`
}

// TurboRatio is the highest ratio while at most Cores cores are active.
type TurboRatio struct {
	Cores uint8 `json:"cores"`
	Ratio uint8 `json:"ratio"`
}

// Build reads the machine. spec is a -C CPU list ("" for every online
// CPU). Only a bad selection is an error (wrapping ErrBadCPUList) or a root
// so broken that no CPU list can be read; everything else missing is
// reported in the snapshot's capabilities and n/a values.
func Build(src Sources, spec string) (*Snapshot, error) {
	root := src.FS.Root()
	online, err := sysfs.NewFS(root).OnlineCPUs()
	if err != nil {
		return nil, fmt.Errorf("read online CPUs: %w", err)
	}
	present, err := sysfs.NewFS(root).PresentCPUs()
	if err != nil {
		present = online
	}
	sel, err := cpus.Select(spec, online, present)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadCPUList, err)
	}
	b := &builder{src: src, s: &Snapshot{
		Emulated:     src.FS.Emulated(),
		SelectedCPUs: sel.String(),
		OfflineCPUs:  present.Minus(online).String(),
	}}
	b.machine()
	b.driver()
	b.probeDevices(sel)
	topo, err := topology.Detect(src.FS, b.cpuidReader(), sel)
	b.readErr(err)
	b.s.Hybrid = topo.Hybrid
	b.s.CoreTypeSource = string(topo.Source)
	byCPU := map[int]CPU{}
	for _, t := range topo.CPUs {
		byCPU[t.CPU] = b.cpu(t)
	}
	for _, g := range topo.Groups() {
		grp := Group{CoreType: g.Type.Long(), CPUList: g.CPUs.String()}
		for _, n := range g.CPUs {
			grp.CPUs = append(grp.CPUs, byCPU[n])
		}
		b.s.Groups = append(b.s.Groups, grp)
	}
	zones, err := src.FS.PowercapZones()
	b.readErr(err)
	b.zones = zones
	b.packages(topo)
	b.s.Findings = append(findings(b.s), packageFindings(b.s)...)
	b.s.Capabilities = b.capabilities(sel, topo)
	return b.s, nil
}

// builder carries the state of one Build.
type builder struct {
	src      Sources
	s        *Snapshot
	info     []sysfs.CPUInfo
	msrErr   error // why MSRs cannot be read at all (nil: they can)
	cpuidErr error // why /dev/cpu/N/cpuid cannot be read at all
	cpufreq  int   // CPUs with a cpufreq policy
	epbFiles int   // CPUs with cpuN/power/energy_perf_bias
	zones    []sysfs.PowercapZone
}

func (b *builder) readErr(err error) {
	if err != nil {
		for _, e := range splitJoined(err) {
			b.s.ReadErrors = append(b.s.ReadErrors, e.Error())
		}
	}
}

// splitJoined undoes errors.Join so that each failure is its own line.
func splitJoined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, splitJoined(e)...)
		}
		return out
	}
	return []error{err}
}

// pmFlags are the /proc/cpuinfo flags the snapshot reports.
var pmFlags = []string{"hwp", "hwp_notify", "hwp_act_window", "hwp_epp", "hwp_pkg_req", "epb", "aperfmperf", "cppc", "hypervisor"}

func (b *builder) machine() {
	info, err := b.src.FS.CPUInfo()
	if err != nil {
		b.readErr(fmt.Errorf("proc/cpuinfo: %w", err))
		return
	}
	b.info = info
	c := info[0]
	m := Machine{Vendor: c.VendorID, ModelName: c.ModelName, Family: c.Family, Model: c.Model, Stepping: c.Stepping, Microcode: c.Microcode, Flags: []string{}}
	for _, f := range pmFlags {
		if c.HasFlag(f) {
			m.Flags = append(m.Flags, f)
		}
	}
	switch c.VendorID {
	case "GenuineIntel":
		t := IntelEPPTable(c.Family, c.Model)
		m.EPPTable = &t
	case "AuthenticAMD", "HygonGenuine":
		t := AMDEPPTable()
		m.EPPTable = &t
	}
	b.s.Machine = m
}

func (b *builder) hasFlag(flag string) bool {
	return len(b.info) > 0 && b.info[0].HasFlag(flag)
}

func (b *builder) driver() {
	ip, err := b.src.FS.IntelPstate()
	b.readErr(err)
	if ip != nil {
		b.s.Driver.IntelPstate = &IntelPstate{Status: ip.Status, NoTurbo: ip.NoTurbo, MinPerfPct: ip.MinPerfPct, MaxPerfPct: ip.MaxPerfPct, HWPDynamicBoost: ip.HWPDynamicBoost}
	}
	ap, err := b.src.FS.AMDPstate()
	b.readErr(err)
	if ap != nil {
		b.s.Driver.AMDPstate = &AMDPstate{Status: ap.Status, Prefcore: ap.Prefcore}
	}
	boost, err := b.src.FS.Boost()
	b.readErr(err)
	b.s.Driver.Boost = boost
}

// probeDevices finds out once whether MSRs and CPUID can be read at all,
// so that a missing device is one capability line, not an error per
// register per CPU.
func (b *builder) probeDevices(sel cpus.List) {
	if len(sel) == 0 {
		return
	}
	if b.src.MSR == nil {
		b.msrErr = errors.New("no MSR reader")
	} else if _, err := b.src.MSR.ReadMSR(sel[0], msrTSC); err != nil && !errors.Is(err, msr.ErrUnsupported) {
		b.msrErr = err
	}
	if b.src.CPUID == nil {
		b.cpuidErr = errors.New("no CPUID reader")
	} else if _, err := b.src.CPUID.CPUID(sel[0], cpuid.LeafVendor, 0); err != nil {
		b.cpuidErr = err
	}
}

// msrTSC is IA32_TIME_STAMP_COUNTER, implemented by every x86-64 CPU: the
// probe for "can MSRs be read at all".
const msrTSC = 0x10

func (b *builder) cpuidReader() cpuid.Reader {
	if b.cpuidErr != nil {
		return nil
	}
	return b.src.CPUID
}

// reg reads one MSR. It returns ok false when the value is not available;
// the reason is recorded in unavail unless the whole device is missing
// (that is one capability line instead).
func (b *builder) reg(cpu int, addr uint32, name string, unavail map[string]string) (uint64, bool) {
	if b.msrErr != nil {
		return 0, false
	}
	v, err := b.src.MSR.ReadMSR(cpu, addr)
	if err != nil {
		unavail[name] = err.Error()
		return 0, false
	}
	return v, true
}

// request reads the request register r on cpu as regs.Request; a failed
// read is noted in unavail under r's name.
func (b *builder) request(cpu int, r *regs.Register, unavail map[string]string) (regs.Request, bool) {
	v, ok := b.regOf(cpu, r, unavail)
	if !ok {
		return regs.Request{}, false
	}
	return regs.RequestFrom(r.Address, v)
}

// regOf is reg for a catalog register, noted under its name.
func (b *builder) regOf(cpu int, r *regs.Register, unavail map[string]string) (uint64, bool) {
	return b.reg(cpu, r.Address, r.Name, unavail)
}

// hwpRequest is the snapshot form of an Intel request register;
// PackageControl is false for IA32_HWP_REQUEST_PKG, which has no such bit.
func hwpRequest(q regs.Request) *HWPRequest {
	return &HWPRequest{Raw: Hex(q.Raw), Min: q.Min, Max: q.Max, Desired: q.Desired, EPP: q.EPP,
		ActivityWindowUS: q.ActivityWindowMicros(), PackageControl: q.PackageControl}
}

func (b *builder) intel() bool { return b.s.Machine.Vendor == "GenuineIntel" }
func (b *builder) amd() bool {
	return b.s.Machine.Vendor == "AuthenticAMD" || b.s.Machine.Vendor == "HygonGenuine"
}

func (b *builder) cpu(t topology.CPU) CPU {
	c := CPU{CPU: t.CPU, Package: t.Package, Core: t.Core, CoreType: t.Type.Long(), Unavailable: map[string]string{}}
	cf, err := b.src.FS.CPUFreq(t.CPU)
	if !errors.Is(err, sysfs.ErrNoCPUFreq) {
		b.readErr(err)
	}
	if cf != nil {
		b.cpufreq++
		c.Sysfs = CPUSysfs{
			ScalingDriver: cf.Driver, ScalingGovernor: cf.Governor, EPP: cf.EPP,
			ScalingMinKHz: cf.ScalingMinKHz, ScalingMaxKHz: cf.ScalingMaxKHz,
			CPUInfoMinKHz: cf.CPUInfoMinKHz, CPUInfoMaxKHz: cf.CPUInfoMaxKHz,
			BaseFreqKHz: cf.BaseFrequencyKHz, AMDHighestPerf: cf.AMDHighestPerf,
			AMDPrefcoreRank: cf.AMDPrefcoreRanking,
		}
	}
	epb, err := b.src.FS.EnergyPerfBias(t.CPU)
	b.readErr(err)
	if epb != nil {
		b.epbFiles++
	}
	c.Sysfs.EPB = epb

	r := &c.Registers
	u := c.Unavailable
	if b.intel() {
		if b.hasFlag("hwp") {
			if v, ok := b.reg(t.CPU, hwp.MSR_IA32_PM_ENABLE, "IA32_PM_ENABLE", u); ok {
				on := hwp.DecodePMEnable(v)
				r.HWPEnabled = &on
			}
			if q, ok := b.request(t.CPU, regs.RequestOf(regs.Intel), u); ok {
				r.HWPRequest = hwpRequest(q)
			}
			if v, ok := b.reg(t.CPU, hwp.MSR_IA32_HWP_CAPABILITIES, "IA32_HWP_CAPABILITIES", u); ok {
				d := hwp.DecodeCapabilities(v)
				r.HWPCapabilities = &HWPCapabilities{Raw: Hex(v), Highest: d.Highest, Guaranteed: d.Guaranteed, MostEfficient: d.MostEfficient, Lowest: d.Lowest}
			}
			r.HWPStatus = b.hwpStatus(t.CPU, u)
		}
		if b.hasFlag("epb") {
			if v, ok := b.regOf(t.CPU, regs.EPB(), u); ok {
				e := hwp.DecodeEPB(v)
				r.EPB = &EPB{Raw: Hex(v), Value: e, Name: hwp.EPBNameFor(e, hwp.EPBNormal(uint32(b.s.Machine.Family), uint32(b.s.Machine.Model)))}
			}
		}
		if v, ok := b.reg(t.CPU, hwp.MSR_IA32_MISC_ENABLE, "IA32_MISC_ENABLE", u); ok {
			off := hwp.DecodeMiscEnable(v).TurboDisable
			r.TurboDisabled = &off
		}
		if tt, ok := b.reg(t.CPU, hwp.MSR_TEMPERATURE_TARGET, "MSR_TEMPERATURE_TARGET", u); ok {
			if ts, ok := b.reg(t.CPU, hwp.MSR_IA32_THERM_STATUS, "IA32_THERM_STATUS", u); ok {
				st := hwp.DecodeThermStatus(ts)
				if st.ReadingValid {
					temp := hwp.Temperature(hwp.DecodeTemperatureTarget(tt).TjMax, st.Readout)
					r.TemperatureC = &temp
				}
			}
		}
	}
	if b.amd() && b.hasFlag("cppc") {
		if v, ok := b.reg(t.CPU, hwp.MSR_AMD_CPPC_ENABLE, "MSR_AMD_CPPC_ENABLE", u); ok {
			on := hwp.DecodeCPPCEnable(v)
			r.CPPCEnabled = &on
		}
		if v, ok := b.reg(t.CPU, hwp.MSR_AMD_CPPC_CAP1, "MSR_AMD_CPPC_CAP1", u); ok {
			d := hwp.DecodeCPPCCap1(v)
			r.CPPCCap1 = &CPPCCap1{Raw: Hex(v), Highest: d.Highest, Nominal: d.Nominal, LowestNonlinear: d.LowestNonlinear, Lowest: d.Lowest}
		}
		if q, ok := b.request(t.CPU, regs.RequestOf(regs.AMD), u); ok {
			r.CPPCReq = &CPPCReq{Raw: Hex(q.Raw), Max: q.Max, Min: q.Min, Desired: q.Desired, EPP: q.EPP}
		}
	}
	if len(c.Unavailable) == 0 {
		c.Unavailable = nil
	}
	return c
}

func (b *builder) packages(topo topology.Topology) {
	seen := map[int]bool{}
	for _, t := range topo.CPUs {
		if seen[t.Package] {
			continue
		}
		seen[t.Package] = true
		p := Package{Package: t.Package, ReadOnCPU: t.CPU, TurboRatios: []TurboRatio{}, Powercap: b.powercap(t.Package), Unavailable: map[string]string{}}
		var members cpus.List
		for _, c := range topo.CPUs {
			if c.Package == t.Package {
				members = append(members, c.CPU)
			}
		}
		p.CPUs = members.String()
		u := p.Unavailable
		unitReg, unitName := uint32(rapl.MSR_RAPL_POWER_UNIT), "MSR_RAPL_POWER_UNIT"
		if b.amd() {
			unitReg, unitName = rapl.MSR_AMD_RAPL_POWER_UNIT, "MSR_AMD_RAPL_POWER_UNIT"
		}
		if !b.intel() && !b.amd() {
			b.s.Packages = append(b.s.Packages, p)
			continue
		}
		var units *rapl.PowerUnit
		if v, ok := b.reg(t.CPU, unitReg, unitName, u); ok {
			d := rapl.DecodePowerUnit(v)
			units = &d
			p.RAPLUnits = &RAPLUnits{Raw: Hex(v), PowerUnitW: d.Power, EnergyUnitJ: d.Energy, TimeUnitS: d.Time}
		}
		if b.intel() {
			if v, ok := b.reg(t.CPU, hwp.MSR_PLATFORM_INFO, "MSR_PLATFORM_INFO", u); ok {
				d := hwp.DecodePlatformInfo(v)
				p.BaseRatio, p.MaxEfficiencyRatio = &d.MaxNonTurboRatio, &d.MaxEfficiencyRatio
			}
			if units != nil {
				if v, ok := b.reg(t.CPU, rapl.MSR_PKG_POWER_INFO, "MSR_PKG_POWER_INFO", u); ok {
					tdp := rapl.DecodePowerInfo(v, *units).TDP
					p.TDPW = &tdp
				}
				if v, ok := b.reg(t.CPU, rapl.MSR_PKG_POWER_LIMIT, "MSR_PKG_POWER_LIMIT", u); ok {
					d := rapl.DecodePowerLimit(v, *units)
					p.PowerLimit = &PowerLimit{Raw: Hex(v),
						PL1W: d.PL1.Power, PL1Enabled: d.PL1.Enabled, PL1Clamp: d.PL1.Clamp, PL1TimeS: d.PL1.Window,
						PL2W: d.PL2.Power, PL2Enabled: d.PL2.Enabled, PL2Clamp: d.PL2.Clamp, PL2TimeS: d.PL2.Window,
						Locked: d.Locked}
				}
			}
			if v, ok := b.reg(t.CPU, hwp.MSR_TEMPERATURE_TARGET, "MSR_TEMPERATURE_TARGET", u); ok {
				d := hwp.DecodeTemperatureTarget(v)
				tj, off := int(d.TjMax), int(d.Offset)
				p.TjMaxC, p.TCCOffsetC = &tj, &off
				if v, ok := b.reg(t.CPU, hwp.MSR_IA32_PACKAGE_THERM_STATUS, "IA32_PACKAGE_THERM_STATUS", u); ok {
					temp := hwp.Temperature(d.TjMax, hwp.DecodeThermStatus(v).Readout)
					p.TemperatureC = &temp
				}
			}
			p.LimitReasons = b.limitReasons(t.CPU, u)
			if b.hasFlag("hwp_pkg_req") {
				if q, ok := b.request(t.CPU, regs.ByRole(regs.RolePackageRequest)[0], u); ok {
					p.HWPRequestPkg = hwpRequest(q)
				}
			}
			if v, ok := b.reg(t.CPU, hwp.MSR_TURBO_RATIO_LIMIT, "MSR_TURBO_RATIO_LIMIT", u); ok {
				for _, g := range hwp.DecodeTurboRatioLimit(v) {
					p.TurboRatios = append(p.TurboRatios, TurboRatio{Cores: g.Cores, Ratio: g.Ratio})
				}
			}
		}
		if len(u) == 0 {
			p.Unavailable = nil
		}
		b.s.Packages = append(b.s.Packages, p)
	}
}

// powercap returns the zones named package-<pkg>, converted from µW and
// µs.
func (b *builder) powercap(pkg int) []PowercapLimits {
	out := []PowercapLimits{}
	for _, z := range b.zones {
		if z.Name != fmt.Sprintf("package-%d", pkg) {
			continue
		}
		l := PowercapLimits{Zone: z.ID, Interface: "msr"}
		if z.MMIO() {
			l.Interface = "mmio"
		}
		if z.Enabled != nil {
			on := *z.Enabled != 0
			l.Enabled = &on
		}
		for _, c := range z.Constraints {
			w, t := scaled(c.PowerLimitUW), scaled(c.TimeWindowUS)
			switch c.Name {
			case "long_term":
				l.PL1W, l.PL1TimeS = w, t
			case "short_term":
				l.PL2W, l.PL2TimeS = w, t
			}
		}
		out = append(out, l)
	}
	return out
}

// scaled converts µW or µs to W or s.
func scaled(v *int64) *float64 {
	if v == nil {
		return nil
	}
	f := float64(*v) / 1e6
	return &f
}
