// SPDX-License-Identifier: Apache-2.0

// Package rapl decodes the Running Average Power Limit registers of Intel
// (Intel SDM vol. 3B section 15.10 "Platform Specific Power Management
// Support") and AMD (PPR: Core::X86::Msr::RAPL_PWR_UNIT, CORE_ENERGY_STAT,
// PKG_ENERGY_STAT), and turns their 32-bit energy counters into joules with
// wrap-aware deltas. Every decoder is a pure function over the raw value;
// the formulas are the ones tools/power/x86/turbostat/turbostat.c uses.
package rapl

import (
	"math"
	"time"
)

// Register addresses.
const (
	MSR_RAPL_POWER_UNIT        = 0x606
	MSR_PKG_POWER_LIMIT        = 0x610
	MSR_PKG_ENERGY_STATUS      = 0x611
	MSR_PKG_POWER_INFO         = 0x614
	MSR_DRAM_ENERGY_STATUS     = 0x619
	MSR_PP0_ENERGY_STATUS      = 0x639
	MSR_PP1_ENERGY_STATUS      = 0x641
	MSR_PLATFORM_ENERGY_STATUS = 0x64D
	MSR_AMD_RAPL_POWER_UNIT    = 0xC0010299
	MSR_AMD_CORE_ENERGY_STATUS = 0xC001029A
	MSR_AMD_PKG_ENERGY_STATUS  = 0xC001029B
)

// DefaultPowerUnitRaw is the MSR_RAPL_POWER_UNIT value most Intel client and
// server parts report (1/8 W, 1/16384 J = 61 µJ, 1/1024 s = 977 µs); used,
// and said so, when the real value is not known.
const DefaultPowerUnitRaw = 0xa0e03

// PowerUnit is MSR_RAPL_POWER_UNIT (0x606) or AMD's RAPL_PWR_UNIT
// (0xC0010299); both have the same layout.
type PowerUnit struct {
	PowerBits  uint8   // Power Units, bits 3:0
	EnergyBits uint8   // Energy Status Units, bits 12:8
	TimeBits   uint8   // Time Units, bits 19:16
	Power      float64 // watts per count: 1/2^PowerBits
	Energy     float64 // joules per count: 1/2^EnergyBits
	Time       float64 // seconds per count: 1/2^TimeBits
}

// DecodePowerUnit decodes MSR_RAPL_POWER_UNIT or AMD RAPL_PWR_UNIT.
func DecodePowerUnit(v uint64) PowerUnit {
	u := PowerUnit{
		PowerBits:  uint8(v & 0xf),
		EnergyBits: uint8(v>>8) & 0x1f,
		TimeBits:   uint8(v>>16) & 0xf,
	}
	u.Power = math.Ldexp(1, -int(u.PowerBits))
	u.Energy = math.Ldexp(1, -int(u.EnergyBits))
	u.Time = math.Ldexp(1, -int(u.TimeBits))
	return u
}

// PowerInfo is MSR_PKG_POWER_INFO (0x614), in watts and seconds.
type PowerInfo struct {
	TDP       float64 // Thermal Spec Power, bits 14:0
	MinPower  float64 // Minimum Power, bits 30:16
	MaxPower  float64 // Maximum Power, bits 46:32
	MaxWindow float64 // Maximum Time Window, bits 53:48 (times the time unit, as turbostat)
}

// DecodePowerInfo decodes MSR_PKG_POWER_INFO with the given units.
func DecodePowerInfo(v uint64, u PowerUnit) PowerInfo {
	return PowerInfo{
		TDP:       float64(v&0x7fff) * u.Power,
		MinPower:  float64(v>>16&0x7fff) * u.Power,
		MaxPower:  float64(v>>32&0x7fff) * u.Power,
		MaxWindow: float64(v>>48&0x3f) * u.Time,
	}
}

// Limit is one power limit of MSR_PKG_POWER_LIMIT.
type Limit struct {
	Power   float64 // watts
	Enabled bool
	Clamp   bool    // may go below the OS-requested P-state to stay in the limit
	Window  float64 // time window in seconds
	// WindowY and WindowF are the raw exponent (5 bits) and fraction
	// (2 bits) of the time window.
	WindowY, WindowF uint8
}

// decodeLimit decodes the 24 bits of one limit (PL1 at bit 0, PL2 at bit
// 32): power 14:0, enable 15, clamp 16, window Y 21:17, F 23:22.
// Window = (1 + F/4) * 2^Y * time unit (SDM; turbostat rapl_limit).
func decodeLimit(v uint64, u PowerUnit) Limit {
	l := Limit{
		Power:   float64(v&0x7fff) * u.Power,
		Enabled: v>>15&1 != 0,
		Clamp:   v>>16&1 != 0,
		WindowY: uint8(v>>17) & 0x1f,
		WindowF: uint8(v>>22) & 0x3,
	}
	l.Window = (1 + float64(l.WindowF)/4) * math.Ldexp(1, int(l.WindowY)) * u.Time
	return l
}

// PowerLimit is MSR_PKG_POWER_LIMIT (0x610).
type PowerLimit struct {
	PL1    Limit // bits 23:0
	PL2    Limit // bits 55:32
	Locked bool  // bit 63: read-only until reset
}

// DecodePowerLimit decodes MSR_PKG_POWER_LIMIT with the given units.
func DecodePowerLimit(v uint64, u PowerUnit) PowerLimit {
	return PowerLimit{
		PL1:    decodeLimit(v, u),
		PL2:    decodeLimit(v>>32, u),
		Locked: v>>63 != 0,
	}
}

// EnergyCount returns the 32-bit Total Energy Consumed counter of an
// energy status register (bits 31:0; the upper half is reserved).
func EnergyCount(v uint64) uint32 { return uint32(v) }

// Joules converts an energy counter value or delta to joules.
func Joules(count uint64, u PowerUnit) float64 { return float64(count) * u.Energy }

// Delta returns the counts between two readings of a 32-bit energy
// counter, assuming it wrapped at most once: cur < prev means one wrap.
// Equal readings give 0 (turbostat's DELTA_WRAP32 counts them as a whole
// wrap); use MayHaveWrappedAgain to know whether an interval was too long
// to tell.
func Delta(prev, cur uint32) uint64 { return uint64(cur - prev) }

// WrapPeriod returns the shortest time in which the 32-bit counter can
// wrap: 2^32 energy units at maxPower watts. It is 0 when maxPower is not
// positive.
func WrapPeriod(u PowerUnit, maxPower float64) time.Duration {
	if maxPower <= 0 {
		return 0
	}
	s := math.Ldexp(u.Energy, 32) / maxPower
	return time.Duration(s * float64(time.Second))
}

// MayHaveWrappedAgain reports whether a Delta over elapsed may have lost
// whole wraps: at maxPower watts the counter can wrap once in WrapPeriod,
// so an interval that long or longer is ambiguous. maxPower should be an
// upper bound such as PowerInfo.MaxPower or twice the TDP; a non-positive
// maxPower makes every interval ambiguous.
func MayHaveWrappedAgain(elapsed time.Duration, u PowerUnit, maxPower float64) bool {
	p := WrapPeriod(u, maxPower)
	return p == 0 || elapsed >= p
}

// PowercapConstraint is one constraint of a powercap RAPL zone as the
// kernel derives it from a power-limit register
// (drivers/powercap/intel_rapl_common.c, rapl_unit_xlate() and
// rapl_compute_time_window_core()): integer arithmetic on a power unit of
// 1000000 >> PU µW and a time unit of 1000000 >> TU µs.
type PowercapConstraint struct {
	Name         string // constraint_N_name: long_term (PL1), short_term (PL2)
	PowerLimitUW uint64 // constraint_N_power_limit_uw
	TimeWindowUS uint64 // constraint_N_time_window_us: 2^Y x (4 + F) x time unit / 4
}

// PowercapConstraints returns the two constraints the kernel shows for
// MSR_PKG_POWER_LIMIT limit under MSR_RAPL_POWER_UNIT units.
func PowercapConstraints(limit, units uint64) [2]PowercapConstraint {
	powerUnit := uint64(1000000) >> (units & 0xf)
	timeUnit := uint64(1000000) >> (units >> 16 & 0xf)
	var out [2]PowercapConstraint
	for i, name := range []string{"long_term", "short_term"} {
		f := limit >> (32 * i)
		y, fr := f>>17&0x1f, f>>22&0x3
		out[i] = PowercapConstraint{Name: name, PowerLimitUW: (f & 0x7fff) * powerUnit,
			TimeWindowUS: (uint64(1) << y) * (4 + fr) * timeUnit / 4}
	}
	return out
}
