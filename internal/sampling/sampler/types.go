// SPDX-License-Identifier: Apache-2.0

package sampler

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/kernel/topology"
)

// Source says which interface gave a figure. The zero value, SrcNone,
// means the figure is absent: the machine or kernel cannot provide it.
type Source uint8

// Sources of figures, from the kernel's preferred interfaces to the
// fallbacks (docs/kernel-facts.md section 3).
const (
	SrcNone     Source = iota // not available
	SrcPerf                   // perf_event_open: msr, power, hardware or software PMU
	SrcMSR                    // /dev/cpu/N/msr
	SrcPowercap               // /sys/class/powercap/intel-rapl:*/energy_uj
	SrcSysfs                  // other sysfs files
	SrcClock                  // derived from the wall clock and a nominal frequency (TSC without a TSC counter)
)

var sourceNames = [...]string{"", "perf", "msr", "powercap", "sysfs", "clock"}

// String returns the source's name as used in text and JSON output
// ("perf", "msr", "powercap", "sysfs", "clock"; "" for SrcNone).
func (s Source) String() string {
	if int(s) < len(sourceNames) {
		return sourceNames[s]
	}
	return "source(" + strconv.Itoa(int(s)) + ")"
}

// MarshalText implements encoding.TextMarshaler.
func (s Source) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *Source) UnmarshalText(b []byte) error {
	for i, n := range sourceNames {
		if n == string(b) {
			*s = Source(i)
			return nil
		}
	}
	return fmt.Errorf("unknown figure source %q", b)
}

// Flag qualifies a figure.
type Flag uint8

// Flags a Value may carry.
const (
	// FlagMultiplexed: the perf counters behind the figure were not
	// running for the whole interval (time_running < time_enabled); the
	// counts were scaled by time_enabled/time_running as perf stat does.
	FlagMultiplexed Flag = 1 << iota
	// FlagReadsZero: the counter exists but did not advance (for
	// example the power PMU's energy-psys in a VM); the figure is not a
	// measured 0 and is shown as "reads zero".
	FlagReadsZero
	// FlagWrapped: a counter wrapped during the interval and the delta
	// was corrected for it (32-bit RAPL energy status registers).
	FlagWrapped
)

// Value is one figure with the source that gave it. Src == SrcNone means
// absent; V is then meaningless. In JSON a present Value is
// {"v":1234.5,"src":"perf"} (plus "flags" when set) and an absent one is
// null.
type Value struct {
	V     float64
	Src   Source
	Flags Flag
}

// OK reports whether the figure is present and a real measurement (not
// absent, not a counter that reads zero).
func (v Value) OK() bool { return v.Src != SrcNone && v.Flags&FlagReadsZero == 0 }

type valueJSON struct {
	V     float64  `json:"v"`
	Src   Source   `json:"src"`
	Flags []string `json:"flags,omitempty"`
}

var flagNames = [...]string{"multiplexed", "reads_zero", "wrapped"}

// MarshalJSON implements json.Marshaler.
func (v Value) MarshalJSON() ([]byte, error) {
	if v.Src == SrcNone || math.IsNaN(v.V) || math.IsInf(v.V, 0) {
		return []byte("null"), nil
	}
	j := valueJSON{V: v.V, Src: v.Src}
	for i, n := range flagNames {
		if v.Flags&(1<<i) != 0 {
			j.Flags = append(j.Flags, n)
		}
	}
	return json.Marshal(j)
}

// UnmarshalJSON implements json.Unmarshaler.
func (v *Value) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*v = Value{}
		return nil
	}
	var j valueJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*v = Value{V: j.V, Src: j.Src}
	for _, f := range j.Flags {
		found := false
		for i, n := range flagNames {
			if f == n {
				v.Flags |= 1 << i
				found = true
			}
		}
		if !found {
			return fmt.Errorf("unknown figure flag %q", f)
		}
	}
	return nil
}

// Reg is a raw register value read in a sample, with its source. Decode it
// with package hwp (hwp.DecodeRequest, hwp.DecodeEPB). Src == SrcNone
// means the register could not be read.
type Reg struct {
	Raw uint64 `json:"raw"`
	Src Source `json:"src"`
	// Changed is set when the value differs from the previous reading
	// (the baseline reading, for the first sample); Prev is then the
	// previous value.
	Changed bool   `json:"changed,omitempty"`
	Prev    uint64 `json:"prev,omitempty"`
}

// OK reports whether the register was read.
func (r Reg) OK() bool { return r.Src != SrcNone }

// Counts are the raw counter deltas of one CPU over an interval, after
// multiplex scaling. A count is valid only when its figure's Src is set.
type Counts struct {
	APERF        uint64 `json:"aperf"`
	MPERF        uint64 `json:"mperf"`
	TSC          uint64 `json:"tsc"`
	Instructions uint64 `json:"instructions"`
	Cycles       uint64 `json:"cycles"`
	RefCycles    uint64 `json:"ref_cycles"`
}

// CPU is one logical CPU's figures for one interval. Column names and
// formulas are turbostat's (see docs/watch.md).
type CPU struct {
	CPU     int               `json:"cpu"`
	Package int               `json:"package"`
	Core    int               `json:"core"`
	Type    topology.CoreType `json:"type,omitempty"`

	// AvgMHz is turbostat's Avg_MHz: APERF/interval in MHz.
	AvgMHz Value `json:"avg_mhz"`
	// BusyPct is Busy%: 100 x MPERF/TSC.
	BusyPct Value `json:"busy_pct"`
	// BzyMHz is Bzy_MHz: TSC_MHz x APERF/MPERF.
	BzyMHz Value `json:"bzy_mhz"`
	// TSCMHz is TSC_MHz: TSC/interval in MHz.
	TSCMHz Value `json:"tsc_mhz"`
	// IPC is instructions/APERF, as turbostat (instructions/cycles when
	// APERF is absent but the cycles event counts).
	IPC Value `json:"ipc"`
	// CoreTmp is TjMax minus IA32_THERM_STATUS's digital readout, °C.
	CoreTmp Value `json:"core_tmp"`

	// HWPRequest is the request register (regs.Requests): Intel's
	// IA32_HWP_REQUEST or AMD's CPPC request; Info.HWPRegister says which.
	HWPRequest Reg `json:"hwp_request"`
	// EPB is IA32_ENERGY_PERF_BIAS (regs.EPB).
	EPB Reg `json:"epb"`
	// HWPStatus is IA32_HWP_STATUS (0x777) as read at the end of the
	// interval. Its bits are sticky: set by the hardware and cleared only
	// by software writing 0 (hwpprobe never writes it; intel_pstate does
	// when it handles an HWP notification), so a set Excursion_To_Minimum
	// (bit 2, hwp.DecodeStatus) says the delivered performance fell below
	// the request's minimum at some time since the last clear, which may
	// be before this interval.
	HWPStatus Reg `json:"hwp_status"`
	// Regs are the registers of Setup.CPURegs that were read, in that
	// order. They are recorded (package recorder) but not part of this
	// JSON form.
	Regs []AddrReg `json:"-"`

	// Counts holds the deltas the figures were computed from.
	Counts Counts `json:"counts"`
}

// Package is one package's (socket's) figures for one interval.
type Package struct {
	Package int `json:"package"`

	// PkgWatt, CorWatt, GFXWatt, RAMWatt and SysWatt are the RAPL
	// domains' energy deltas divided by the interval (turbostat's PkgWatt,
	// CorWatt, GFXWatt, RAMWatt; SysWatt is the psys domain).
	PkgWatt Value `json:"pkg_watt"`
	CorWatt Value `json:"cor_watt"`
	GFXWatt Value `json:"gfx_watt"`
	RAMWatt Value `json:"ram_watt"`
	SysWatt Value `json:"sys_watt"`
	// PkgTmp is TjMax minus IA32_PACKAGE_THERM_STATUS's readout, °C.
	PkgTmp Value `json:"pkg_tmp"`

	// LimitReasons is MSR_CORE_PERF_LIMIT_REASONS (0x64F), read on the
	// package's first CPU.
	LimitReasons Reg `json:"limit_reasons"`
	// ThermStatus is IA32_PACKAGE_THERM_STATUS (0x1B1), whose low bits
	// carry the thermal and power-limit status and log flags.
	ThermStatus Reg `json:"therm_status"`
	// PowerLimit is MSR_PKG_POWER_LIMIT (0x610), read on the package's
	// first CPU: PL1 and PL2 in force.
	PowerLimit Reg `json:"power_limit"`
	// Regs are the registers of Setup.PkgRegs that were read, as CPU.Regs.
	Regs []AddrReg `json:"-"`
}

// AddrReg is a register figure with its address.
type AddrReg struct {
	MSR uint32
	Reg
}

// Summary aggregates the CPUs of one core type (or, with Type topology.All,
// the whole machine) as turbostat's summary row does: frequencies and
// percentages from the summed counters, watts summed over packages (in the
// topology.All row only), temperatures as the maximum.
type Summary struct {
	Type topology.CoreType `json:"type"`
	CPUs int               `json:"cpus"`

	AvgMHz  Value `json:"avg_mhz"`
	BusyPct Value `json:"busy_pct"`
	BzyMHz  Value `json:"bzy_mhz"`
	TSCMHz  Value `json:"tsc_mhz"`
	IPC     Value `json:"ipc"`
	CoreTmp Value `json:"core_tmp"`

	PkgWatt Value `json:"pkg_watt"`
	CorWatt Value `json:"cor_watt"`
	GFXWatt Value `json:"gfx_watt"`
	RAMWatt Value `json:"ram_watt"`
	SysWatt Value `json:"sys_watt"`
	PkgTmp  Value `json:"pkg_tmp"`
}

// Sample is the machine's figures over one interval. The sampler reuses a
// Sample's slices from one call to the next; copy it (Clone) to keep it.
type Sample struct {
	// Seq counts samples from 1.
	Seq uint64 `json:"seq"`
	// Time is the end of the interval (wall clock).
	Time time.Time `json:"time"`
	// Interval is the measured length of the interval (monotonic clock).
	Interval time.Duration `json:"interval_ns"`

	CPUs     []CPU     `json:"cpus"`
	Packages []Package `json:"packages"`
	// Summaries holds one row per core type present (P, E, LP-E, in that
	// order; none on a non-hybrid machine) and then the topology.All row.
	Summaries []Summary `json:"summaries"`
}

// Clone returns a deep copy of s.
func (s *Sample) Clone() Sample {
	c := *s
	c.CPUs = append([]CPU(nil), s.CPUs...)
	c.Packages = append([]Package(nil), s.Packages...)
	c.Summaries = append([]Summary(nil), s.Summaries...)
	return c
}

// Summary returns the summary row of type t, or nil.
func (s *Sample) Summary(t topology.CoreType) *Summary {
	for i := range s.Summaries {
		if s.Summaries[i].Type == t {
			return &s.Summaries[i]
		}
	}
	return nil
}

// Topo places a logical CPU: its package, core and core type. The CLI
// fills it from the topology package; tests give it directly.
type Topo struct {
	CPU     int               `json:"cpu"`
	Package int               `json:"package"`
	Core    int               `json:"core"`
	Type    topology.CoreType `json:"type,omitempty"`
}

// Note says why a figure is absent or how it is qualified, in one line
// (for example "Avg_MHz: no APERF/MPERF: the msr PMU has no aperf event
// and /dev/cpu/0/msr is absent").
type Note struct {
	Figure string `json:"figure"`
	Reason string `json:"reason"`
}

// Info describes a sampler's setup; it does not change between samples.
// A recording stores it once, before the samples.
type Info struct {
	// Emulated is the emulated machine's name ("" on real hardware);
	// when set, every figure is emulated.
	Emulated string `json:"emulated,omitempty"`
	// CPUs are the sampled CPUs, in the order of Sample.CPUs.
	CPUs []Topo `json:"cpus"`
	// Packages are the package numbers, in the order of Sample.Packages.
	Packages []int `json:"packages"`
	// Sources maps a figure (turbostat column name, or HWP_REQUEST, EPB,
	// HWP_STATUS, LIMIT_REASONS) to the source that gives it; absent figures map to
	// SrcNone and have a Note.
	Sources map[string]Source `json:"sources"`
	// Notes explain absent and qualified figures.
	Notes []Note `json:"notes,omitempty"`
	// HWPRegister is the address of the register CPU.HWPRequest holds, one
	// of regs.Requests (Intel's IA32_HWP_REQUEST, or AMD's CPPC request,
	// whose minimum and maximum fields are swapped); 0 when absent.
	HWPRegister uint32 `json:"hwp_register,omitempty"`
}
