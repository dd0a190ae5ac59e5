// SPDX-License-Identifier: Apache-2.0

package cpuid

import (
	"encoding/binary"
	"fmt"
)

// Leaves this package decodes (Intel SDM vol. 2A, CPUID).
const (
	LeafVendor       = 0x0  // maximum basic leaf, vendor string
	LeafSignature    = 0x1  // family, model, stepping
	LeafCache        = 0x4  // deterministic cache parameters (Intel)
	LeafThermalPower = 0x6  // thermal and power management
	LeafExtFeatures  = 0x7  // structured extended features
	LeafHybrid       = 0x1A // hybrid information (native model ID, core type)
)

// Vendor returns the vendor string of leaf 0 ("GenuineIntel",
// "AuthenticAMD"): EBX, EDX, ECX in that order.
func Vendor(r Regs) string {
	var b [12]byte
	binary.LittleEndian.PutUint32(b[0:], r.EBX)
	binary.LittleEndian.PutUint32(b[4:], r.EDX)
	binary.LittleEndian.PutUint32(b[8:], r.ECX)
	return string(b[:])
}

// Signature is the processor signature of leaf 1 EAX, with family and model
// combined as the SDM's "DisplayFamily" and "DisplayModel" (and as
// /proc/cpuinfo's "cpu family" and "model" print them).
type Signature struct {
	Family, Model, Stepping uint32
}

// DecodeSignature decodes leaf 1 EAX: stepping 3:0, model 7:4, family 11:8,
// extended model 19:16, extended family 27:20. DisplayFamily adds the
// extended family only when family is 0xF; DisplayModel prepends the
// extended model when family is 6 or 0xF (SDM vol. 2A, Figure 3-6).
func DecodeSignature(eax uint32) Signature {
	fam := eax >> 8 & 0xf
	model := eax >> 4 & 0xf
	s := Signature{Family: fam, Model: model, Stepping: eax & 0xf}
	if fam == 0xf {
		s.Family += eax >> 20 & 0xff
	}
	if fam == 0x6 || fam == 0xf {
		s.Model |= (eax >> 16 & 0xf) << 4
	}
	return s
}

// String formats the signature as turbostat does: "6:170:4"
// (family:model:stepping, decimal).
func (s Signature) String() string {
	return fmt.Sprintf("%d:%d:%d", s.Family, s.Model, s.Stepping)
}

// PowerFeatures holds the leaf 6 bits hwpprobe relies on; names follow the
// SDM's table for leaf 06H.
type PowerFeatures struct {
	DigitalThermalSensor bool // EAX bit 0
	TurboBoost           bool // EAX bit 1: Intel Turbo Boost Technology available
	PTM                  bool // EAX bit 6: package thermal management
	HWP                  bool // EAX bit 7: IA32_PM_ENABLE, HWP_CAPABILITIES, HWP_REQUEST, HWP_STATUS
	HWPNotification      bool // EAX bit 8: IA32_HWP_INTERRUPT
	HWPActivityWindow    bool // EAX bit 9: IA32_HWP_REQUEST bits 41:32
	HWPEPP               bool // EAX bit 10: IA32_HWP_REQUEST bits 31:24
	HWPPackageRequest    bool // EAX bit 11: IA32_HWP_REQUEST_PKG
	TurboBoostMax3       bool // EAX bit 14: Intel Turbo Boost Max Technology 3.0
	HardwareFeedback     bool // EAX bit 19: IA32_HW_FEEDBACK_PTR/CONFIG
	ThreadDirector       bool // EAX bit 23: Intel Thread Director
	APERFMPERF           bool // ECX bit 0: hardware coordination feedback (IA32_MPERF, IA32_APERF)
	EPB                  bool // ECX bit 3: IA32_ENERGY_PERF_BIAS
}

// DecodePowerFeatures decodes leaf 6.
func DecodePowerFeatures(r Regs) PowerFeatures {
	a := func(bit uint) bool { return r.EAX>>bit&1 != 0 }
	return PowerFeatures{
		DigitalThermalSensor: a(0),
		TurboBoost:           a(1),
		PTM:                  a(6),
		HWP:                  a(7),
		HWPNotification:      a(8),
		HWPActivityWindow:    a(9),
		HWPEPP:               a(10),
		HWPPackageRequest:    a(11),
		TurboBoostMax3:       a(14),
		HardwareFeedback:     a(19),
		ThreadDirector:       a(23),
		APERFMPERF:           r.ECX&1 != 0,
		EPB:                  r.ECX>>3&1 != 0,
	}
}

// Hybrid reports leaf 7 subleaf 0 EDX bit 15: the processor is a hybrid
// part, so leaf 0x1A tells each logical CPU's core type.
func Hybrid(leaf7 Regs) bool { return leaf7.EDX>>15&1 != 0 }

// CoreType is the core type of leaf 0x1A EAX bits 31:24.
type CoreType uint8

// Core types (SDM vol. 2A, leaf 1AH: "20H: Intel Atom, 40H: Intel Core").
const (
	CoreTypeNone CoreType = 0x00 // not a hybrid part, or leaf 0x1A absent
	CoreTypeAtom CoreType = 0x20
	CoreTypeCore CoreType = 0x40
)

// String names the core type.
func (t CoreType) String() string {
	switch t {
	case CoreTypeNone:
		return "none"
	case CoreTypeAtom:
		return "Atom"
	case CoreTypeCore:
		return "Core"
	}
	return fmt.Sprintf("unknown(%#x)", uint8(t))
}

// HybridInfo is leaf 0x1A EAX.
type HybridInfo struct {
	CoreType      CoreType // bits 31:24
	NativeModelID uint32   // bits 23:0
}

// DecodeHybrid decodes leaf 0x1A EAX.
func DecodeHybrid(eax uint32) HybridInfo {
	return HybridInfo{CoreType: CoreType(eax >> 24), NativeModelID: eax & 0xffffff}
}

// CacheType is leaf 4 EAX bits 4:0.
type CacheType uint8

// Cache types of leaf 4; CacheNull ends the enumeration.
const (
	CacheNull        CacheType = 0
	CacheData        CacheType = 1
	CacheInstruction CacheType = 2
	CacheUnified     CacheType = 3
)

// Cache is one subleaf of leaf 4.
type Cache struct {
	Type  CacheType // EAX bits 4:0
	Level uint8     // EAX bits 7:5
}

// DecodeCache decodes leaf 4 EAX.
func DecodeCache(eax uint32) Cache {
	return Cache{Type: CacheType(eax & 0x1f), Level: uint8(eax >> 5 & 0x7)}
}

// maxCacheSubleaves bounds the leaf 4 enumeration in case a device never
// answers a null cache type.
const maxCacheSubleaves = 16

// Caches enumerates leaf 4 of cpu until the null cache type.
func Caches(r Reader, cpu int) ([]Cache, error) {
	var out []Cache
	for sub := uint32(0); sub < maxCacheSubleaves; sub++ {
		regs, err := r.CPUID(cpu, LeafCache, sub)
		if err != nil {
			return nil, err
		}
		c := DecodeCache(regs.EAX)
		if c.Type == CacheNull {
			break
		}
		out = append(out, c)
	}
	return out, nil
}

// HasL3 reports whether any enumerated cache is level 3.
func HasL3(caches []Cache) bool {
	for _, c := range caches {
		if c.Level == 3 {
			return true
		}
	}
	return false
}
