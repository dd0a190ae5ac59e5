// SPDX-License-Identifier: Apache-2.0

// Package hwp decodes the registers of Intel Hardware P-states (HWP), the
// energy/performance bias, thermal and platform registers, and AMD's CPPC
// registers. Every decoder is a pure function over the raw uint64; field
// names follow the Intel SDM (vol. 3B, ch. 15 "Power and Thermal
// Management") and the AMD PPR.
package hwp

// Register addresses (Intel SDM vol. 4; AMD PPR for the 0xC001xxxx ones).
const (
	MSR_IA32_MPERF                = 0xE7
	MSR_IA32_APERF                = 0xE8
	MSR_PLATFORM_INFO             = 0xCE
	MSR_IA32_PERF_STATUS          = 0x198
	MSR_IA32_PERF_CTL             = 0x199
	MSR_IA32_THERM_STATUS         = 0x19C
	MSR_IA32_MISC_ENABLE          = 0x1A0
	MSR_TEMPERATURE_TARGET        = 0x1A2
	MSR_TURBO_RATIO_LIMIT         = 0x1AD
	MSR_IA32_ENERGY_PERF_BIAS     = 0x1B0
	MSR_IA32_PACKAGE_THERM_STATUS = 0x1B1
	MSR_IA32_PM_ENABLE            = 0x770
	MSR_IA32_HWP_CAPABILITIES     = 0x771
	MSR_IA32_HWP_REQUEST_PKG      = 0x772
	MSR_IA32_HWP_INTERRUPT        = 0x773
	MSR_IA32_HWP_REQUEST          = 0x774
	MSR_IA32_HWP_STATUS           = 0x777
	MSR_CORE_PERF_LIMIT_REASONS   = 0x64F
	MSR_AMD_CPPC_CAP1             = 0xC00102B0
	MSR_AMD_CPPC_ENABLE           = 0xC00102B1
	MSR_AMD_CPPC_REQ              = 0xC00102B3
)

// Request is IA32_HWP_REQUEST (0x774) or, without PackageControl and the
// valid bits, IA32_HWP_REQUEST_PKG (0x772).
type Request struct {
	Min     uint8 // Minimum_Performance, bits 7:0
	Max     uint8 // Maximum_Performance, bits 15:8
	Desired uint8 // Desired_Performance, bits 23:16 (0: hardware chooses)
	EPP     uint8 // Energy_Performance_Preference, bits 31:24
	// ActivityWindow is the raw 10-bit field, bits 41:32: a 7-bit
	// mantissa (6:0) times 10 to the 3-bit exponent (9:7), in µs.
	ActivityWindow uint16
	PackageControl bool // bit 42: take fields from IA32_HWP_REQUEST_PKG
	// Valid is bits 63:59 (newer parts): per-field "take this value rather
	// than the package request" bits for EPP, Activity_Window, Desired,
	// Maximum and Minimum (bits 63, 62, 61, 60, 59).
	Valid uint8
}

// DecodeRequest decodes IA32_HWP_REQUEST or IA32_HWP_REQUEST_PKG.
func DecodeRequest(v uint64) Request {
	return Request{
		Min:            uint8(v),
		Max:            uint8(v >> 8),
		Desired:        uint8(v >> 16),
		EPP:            uint8(v >> 24),
		ActivityWindow: uint16(v>>32) & 0x3ff,
		PackageControl: v&(1<<42) != 0,
		Valid:          uint8(v>>59) & 0x1f,
	}
}

// ActivityWindowMicros returns the activity window in microseconds;
// 0 means the hardware chooses.
func (r Request) ActivityWindowMicros() uint64 {
	m := uint64(r.ActivityWindow & 0x7f)
	for e := r.ActivityWindow >> 7 & 0x7; e > 0; e-- {
		m *= 10
	}
	return m
}

// Capabilities is IA32_HWP_CAPABILITIES (0x771).
type Capabilities struct {
	Highest       uint8 // Highest_Performance, bits 7:0
	Guaranteed    uint8 // Guaranteed_Performance, bits 15:8
	MostEfficient uint8 // Most_Efficient_Performance, bits 23:16
	Lowest        uint8 // Lowest_Performance, bits 31:24
}

// DecodeCapabilities decodes IA32_HWP_CAPABILITIES.
func DecodeCapabilities(v uint64) Capabilities {
	return Capabilities{
		Highest:       uint8(v),
		Guaranteed:    uint8(v >> 8),
		MostEfficient: uint8(v >> 16),
		Lowest:        uint8(v >> 24),
	}
}

// DecodeEPB returns the Energy Policy Preference Hint of
// IA32_ENERGY_PERF_BIAS (bits 3:0): 0 highest performance, 15 most saving.
func DecodeEPB(v uint64) uint8 { return uint8(v & 0xf) }
