// SPDX-License-Identifier: Apache-2.0

package sampler

import (
	"time"

	"github.com/hwpprobe/hwpprobe/hwp"
)

// Energy domains of RAPL, in the order of RawPkg.Energy and
// Setup.Energy.
const (
	DomPkg   = iota // package (MSR_PKG_ENERGY_STATUS, energy-pkg, intel-rapl:N)
	DomCores        // PP0, the cores (MSR_PP0_ENERGY_STATUS, energy-cores, intel-rapl:N:0 "core")
	DomGFX          // PP1, the graphics (MSR_PP1_ENERGY_STATUS, energy-gpu, "uncore")
	DomRAM          // DRAM (MSR_DRAM_ENERGY_STATUS, energy-ram, "dram")
	DomPsys         // platform (MSR_PLATFORM_ENERGY_STATUS, energy-psys, "psys")
	NumDomains
)

// DomainColumns are turbostat's column names for the domains.
var DomainColumns = [NumDomains]string{"PkgWatt", "CorWatt", "GFXWatt", "RAMWatt", "SysWatt"}

// Bits of RawCPU.Bad and RawPkg.Bad: a figure whose source is set but
// whose read failed this time (for example a CPU went offline). The
// sampler shows such a figure as absent for the interval.
const (
	BadCounters uint16 = 1 << iota // APERF/MPERF/TSC
	BadPerf                        // the perf group (instructions, cycles; and counters when from perf)
	BadHWP
	BadEPB
	BadTherm
	BadEnergy
	BadLimit
	BadHWPStatus
	BadPowerLimit
)

// RawCPU is one reading of a CPU's cumulative counters and registers.
type RawCPU struct {
	APERF, MPERF, TSC               uint64
	Instructions, Cycles, RefCycles uint64
	// Enabled and Running are the perf group's times (ns); the sampler
	// scales perf counts by ΔEnabled/ΔRunning when they differ.
	Enabled, Running uint64
	HWPRequest       uint64
	EPB              uint64
	ThermStatus      uint64
	// HWPStatus is IA32_HWP_STATUS (0x777).
	HWPStatus uint64
	// Regs are the registers of Setup.CPURegs, in that order.
	Regs RawRegs
	Bad  uint16
	// Time is when APERF, MPERF and TSC were read (the middle of their
	// reads); the zero Time when the Reader does not time them. The
	// sampler's interval runs between the mean of these times, the moment
	// the counters show, rather than the clock after the whole reading,
	// which on a loaded machine can come long after the counters.
	Time time.Time
}

// RawPkg is one reading of a package's cumulative energy counters and
// registers.
type RawPkg struct {
	// Energy holds each domain's counter in the source's own counts
	// (Setup.Energy says the unit and wrap modulus).
	Energy       [NumDomains]uint64
	ThermStatus  uint64
	LimitReasons uint64
	PowerLimit   uint64 // MSR_PKG_POWER_LIMIT
	// Regs are the registers of Setup.PkgRegs, in that order.
	Regs RawRegs
	Bad  uint16
}

// RawRegs are the values of a list of registers; OK[i] is false where
// V[i] could not be read.
type RawRegs struct {
	V  []uint64
	OK []bool
}

func newRawRegs(n int) RawRegs {
	if n == 0 {
		return RawRegs{}
	}
	return RawRegs{V: make([]uint64, n), OK: make([]bool, n)}
}

// Raw is one reading of everything a Reader provides. NewRaw sizes it.
type Raw struct {
	CPU []RawCPU
	Pkg []RawPkg
}

// EnergyCounter says how to turn one domain's counts into joules.
type EnergyCounter struct {
	Src Source
	// Unit is joules per count.
	Unit float64
	// Modulus is where the counter wraps (2^32 for the RAPL MSRs,
	// max_energy_range_uj+1 for powercap); 0 for a 64-bit counter that
	// does not wrap in practice (perf).
	Modulus uint64
}

// Setup says where each figure comes from. It is fixed for a Reader's
// life.
type Setup struct {
	// Emulated is the emulated machine's name, "" on real hardware.
	Emulated string
	// CPUs and Packages are in the order of Raw.CPU and Raw.Pkg.
	CPUs     []Topo
	Packages []int
	// CPURegs and PkgRegs are the addresses of the catalog's sampled
	// registers (regs.Sampled) that have no figure of their own here, read
	// on every CPU and on each package's first CPU: RawCPU.Regs and
	// RawPkg.Regs hold their values, CPU.Regs and Package.Regs their
	// figures.
	CPURegs, PkgRegs []uint32

	// Counters is the source of APERF, MPERF and TSC (one source for
	// all three so that their ratios are consistent); TSC may instead
	// come from TSC alone (TSCOnly) when APERF/MPERF are absent.
	Counters Source
	// TSC is the source of the TSC count (Counters, or SrcPerf/SrcClock
	// when APERF/MPERF are absent or the TSC MSR is).
	TSC          Source
	Instructions Source
	Cycles       Source
	RefCycles    Source
	HWPRequest   Source
	// HWPRegister is the MSR behind HWPRequest, one of regs.Requests
	// (regs.RequestFrom decodes it); 0 when absent.
	HWPRegister uint32
	EPB         Source
	// HWPStatus is the source of IA32_HWP_STATUS (0x777), read on every
	// CPU: SrcMSR where CPUID.06H:EAX bit 7 enumerates HWP and the
	// register reads.
	HWPStatus    Source
	CoreTmp      Source
	PkgTmp       Source
	LimitReasons Source
	// PowerLimit is the source of MSR_PKG_POWER_LIMIT (0x610), read on
	// each package's first CPU: PL1 and PL2 as the package holds them.
	PowerLimit Source
	// LimitTable names the bits of MSR_CORE_PERF_LIMIT_REASONS on this
	// model; nil when none is known (the bits are then shown raw).
	LimitTable *hwp.LimitTable
	Energy     [NumDomains]EnergyCounter
	// TjMax is each CPU's TCC activation temperature (°C), from
	// MSR_TEMPERATURE_TARGET bits 23:16; PkgTjMax per package.
	TjMax    []float64
	PkgTjMax []float64

	// Notes explain absent figures.
	Notes []Note
}

// Reader reads every counter and register of a sampler's CPUs and
// packages. Package source implements it over perf, the MSRs and sysfs;
// tests implement it over fixed sequences.
type Reader interface {
	// Setup describes the Reader; the result must not change.
	Setup() *Setup
	// Read fills r (sized by NewRaw) with the current cumulative values.
	// It must not allocate: the sampler's hot path calls it.
	Read(r *Raw) error
}

// NewRaw returns a Raw sized for s.
func NewRaw(s *Setup) Raw {
	r := Raw{CPU: make([]RawCPU, len(s.CPUs)), Pkg: make([]RawPkg, len(s.Packages))}
	for i := range r.CPU {
		r.CPU[i].Regs = newRawRegs(len(s.CPURegs))
	}
	for i := range r.Pkg {
		r.Pkg[i].Regs = newRawRegs(len(s.PkgRegs))
	}
	return r
}

// Info returns the serialisable description of the setup.
func (s *Setup) Info() Info {
	in := Info{
		Emulated:    s.Emulated,
		CPUs:        append([]Topo(nil), s.CPUs...),
		Packages:    append([]int(nil), s.Packages...),
		Notes:       append([]Note(nil), s.Notes...),
		HWPRegister: s.HWPRegister,
		Sources: map[string]Source{
			"Avg_MHz":       s.Counters,
			"Busy%":         s.Counters,
			"Bzy_MHz":       s.Counters,
			"TSC_MHz":       s.TSC,
			"IPC":           ipcSource(s),
			"CoreTmp":       s.CoreTmp,
			"PkgTmp":        s.PkgTmp,
			"HWP_REQUEST":   s.HWPRequest,
			"EPB":           s.EPB,
			"HWP_STATUS":    s.HWPStatus,
			"LIMIT_REASONS": s.LimitReasons,
			"POWER_LIMIT":   s.PowerLimit,
		},
	}
	for d, c := range s.Energy {
		in.Sources[DomainColumns[d]] = c.Src
	}
	return in
}

// ipcSource: IPC is instructions/APERF as turbostat; with APERF absent,
// instructions/cycles.
func ipcSource(s *Setup) Source {
	if s.Instructions == SrcNone {
		return SrcNone
	}
	if s.Counters != SrcNone || s.Cycles != SrcNone {
		return s.Instructions
	}
	return SrcNone
}
