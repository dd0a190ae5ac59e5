// SPDX-License-Identifier: Apache-2.0

package emu

import (
	"encoding/binary"
	"slices"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
)

// CPUID returns EAX, EBX, ECX, EDX of leaf and subleaf on CPU n, as
// /dev/cpu/N/cpuid answers a 16-byte read at offset leaf | subleaf<<32.
// Leaves the model does not define read as zeros. Bit positions: Intel
// SDM vol. 2A, CPUID; AMD APM vol. 3, appendix E.
func (m *Machine) CPUID(n int, leaf, subleaf uint32) ([4]uint32, error) {
	if n < 0 || n >= len(m.cpus) || !m.cpus[n].online {
		return [4]uint32{}, errNoCPU
	}
	if m.leaves[cpuidKey{cpu: n, leaf: leaf}] {
		if r, ok := m.cpuids[cpuidKey{cpu: n, leaf: leaf, sub: subleaf}]; ok {
			return r, nil
		}
		return m.cpuids[cpuidKey{cpu: n, leaf: leaf, any: true}], nil
	}
	return m.cpuid(m.cpus[n], leaf, subleaf), nil
}

// cpuidKey indexes the description's verbatim CPUID entries; any marks an
// entry for every subleaf.
type cpuidKey struct {
	cpu       int
	leaf, sub uint32
	any       bool
}

// indexCPUID indexes the description's CPUID entries by CPU, leaf and
// subleaf.
func (m *Machine) indexCPUID() {
	for _, e := range m.desc.CPUID {
		l, _ := cpus.Parse(e.CPUs) // checked by ParseDescription
		for _, c := range l {
			k := cpuidKey{cpu: c, leaf: e.Leaf, any: e.Subleaf == nil}
			if e.Subleaf != nil {
				k.sub = *e.Subleaf
			}
			m.cpuids[k] = e.Regs
			m.leaves[cpuidKey{cpu: c, leaf: e.Leaf}] = true
		}
	}
}

func (m *Machine) has(flag string) bool { return slices.Contains(m.desc.Flags, flag) }

func bit(ok bool, n uint) uint32 {
	if ok {
		return 1 << n
	}
	return 0
}

// regs4 splits a 12-byte ASCII string into EBX, EDX, ECX order (leaf 0).
func vendorRegs(s string) (ebx, edx, ecx uint32) {
	b := []byte(s + strings.Repeat("\x00", 12))
	return binary.LittleEndian.Uint32(b[0:]), binary.LittleEndian.Uint32(b[4:]), binary.LittleEndian.Uint32(b[8:])
}

func (m *Machine) cpuid(c *cpu, leaf, sub uint32) [4]uint32 {
	d := m.desc
	amd := d.Vendor == "AuthenticAMD"
	threads := d.Cores[c.group].Threads
	perPkg := len(m.cpus) / d.Packages
	switch leaf {
	case 0:
		b, dx, cx := vendorRegs(d.Vendor)
		return [4]uint32{uint32(d.CPUIDLevel), b, cx, dx}
	case 1:
		fam, extFam := d.Family, 0
		if fam > 0xf {
			fam, extFam = 0xf, d.Family-0xf
		}
		eax := uint32(d.Stepping&0xf | (d.Model&0xf)<<4 | fam<<8 | (d.Model>>4&0xf)<<16 | extFam<<20)
		ebx := c.apic<<24 | uint32(min(perPkg, 255))<<16 | 8<<8 // CLFLUSH 8 x 8 bytes
		// Bits the kernel's flags name (arch/x86/include/asm/cpufeatures.h,
		// words 0 and 4); turbostat prints SSE3 MONITOR SMX EIST TM2 and
		// TSC MSR ACPI-TM HT TM from them and needs MSR.
		ecx := bit(m.has("pni"), 0) | bit(m.has("monitor"), 3) | bit(m.has("smx"), 6) | bit(m.has("est"), 7) |
			bit(m.has("tm2"), 8) | bit(m.has("ssse3"), 9) | bit(m.has("x2apic"), 21) | bit(d.Hypervisor, 31)
		edx := bit(m.has("fpu"), 0) | bit(m.has("tsc"), 4) | bit(m.has("msr"), 5) | bit(m.has("acpi"), 22) |
			bit(m.has("ht"), 28) | bit(m.has("tm"), 29)
		return [4]uint32{eax, ebx, ecx, edx}
	case 4:
		if amd || int(sub) >= len(c.ct.Caches) {
			return [4]uint32{}
		}
		ca := c.ct.Caches[sub]
		typ := map[string]uint32{"Data": 1, "Instruction": 2, "Unified": 3}[ca.Type]
		sharing := uint32(m.cacheSharers(c, ca) - 1)
		eax := typ | uint32(ca.Level)<<5 | 1<<8 | sharing<<14 | uint32(perPkg/threads-1)<<26
		sets := ca.SizeK * 1024 / (ca.Ways * 64)
		return [4]uint32{eax, uint32(ca.Ways-1)<<22 | 63, uint32(sets - 1), 0}
	case 6:
		if amd {
			return [4]uint32{bit(true, 2), 0, bit(m.has("aperfmperf"), 0), 0}
		}
		eax := bit(true, 0) | bit(m.has("ida"), 1) | bit(m.has("arat"), 2) | bit(m.has("pln"), 4) | bit(m.has("pts"), 6) |
			bit(m.has("hwp"), 7) | bit(m.has("hwp_notify"), 8) | bit(m.has("hwp_act_window"), 9) |
			bit(m.has("hwp_epp"), 10) | bit(m.has("hwp_pkg_req"), 11)
		if d.Hypervisor {
			eax = bit(m.has("arat"), 2)
		}
		return [4]uint32{eax, 0, bit(m.has("aperfmperf"), 0) | bit(m.has("epb"), 3), 0}
	case 7:
		if sub != 0 {
			return [4]uint32{}
		}
		return [4]uint32{0, 0, 0, bit(c.ct.CPUIDCoreType != 0, 15)} // EDX 15: hybrid
	case 0xB, 0x1F:
		// Level 0 SMT, level 1 core (package scope).
		shift := uint32(1)
		switch sub {
		case 0:
			return [4]uint32{shift, uint32(threads), 0<<0 | 1<<8, c.apic}
		case 1:
			return [4]uint32{8, uint32(perPkg), 1 | 2<<8, c.apic}
		}
		return [4]uint32{0, 0, sub, c.apic}
	case 0x15:
		if amd || d.CPUIDLevel < 0x15 {
			return [4]uint32{}
		}
		// Ratio TSC/crystal with a 100 MHz-multiple crystal (assumed).
		return [4]uint32{1, uint32(d.TSCMHz / d.BusMHz), uint32(d.BusMHz) * 1e6, 0}
	case 0x16:
		if amd || d.CPUIDLevel < 0x16 || d.MaxMHz == 0 { // guests: leaf 0x16 reads zeros
			return [4]uint32{}
		}
		return [4]uint32{uint32(d.TSCMHz), uint32(d.MaxMHz), uint32(d.BusMHz), 0}
	case 0x1A:
		if c.ct.CPUIDCoreType == 0 || d.CPUIDLevel < 0x1A {
			return [4]uint32{}
		}
		return [4]uint32{uint32(c.ct.CPUIDCoreType)<<24 | uint32(c.ct.NativeModelID), 0, 0, 0}
	case 0x80000000:
		return [4]uint32{0x80000008, 0, 0, 0}
	case 0x80000001:
		return [4]uint32{0, 0, 0, bit(true, 27) | bit(true, 29)} // RDTSCP, LM
	case 0x80000002, 0x80000003, 0x80000004:
		b := []byte(d.Brand + strings.Repeat("\x00", 48))
		o := (leaf - 0x80000002) * 16
		var r [4]uint32
		for i := range r {
			r[i] = binary.LittleEndian.Uint32(b[o+uint32(i)*4:])
		}
		return r
	case 0x80000007:
		// EDX 8: invariant TSC; AMD: 7 HwPstate, 9 CPB, 14 RAPL (turbostat
		// enables AMD RAPL from it).
		edx := bit(m.has("constant_tsc"), 8)
		if amd {
			edx |= bit(m.has("hw_pstate"), 7) | bit(m.has("cpb"), 9) | bit(m.has("rapl"), 14)
		}
		return [4]uint32{0, 0, 0, edx}
	case 0x80000008:
		// AMD EBX 27: CPPC (the kernel's X86_FEATURE_CPPC, flag "cppc").
		ebx := bit(amd && m.has("cppc"), 27)
		return [4]uint32{0x3030, ebx, uint32(perPkg - 1), 0}
	}
	return [4]uint32{}
}

// cacheSharers returns how many logical CPUs share c's instance of ca.
func (m *Machine) cacheSharers(c *cpu, ca Cache) int {
	return len(m.cacheSiblings(c, ca))
}

// cacheSiblings lists the CPUs sharing c's instance of ca.
func (m *Machine) cacheSiblings(c *cpu, ca Cache) []int {
	var out []int
	for _, o := range m.cpus {
		if o.pkg != c.pkg {
			continue
		}
		same := false
		switch {
		case ca.SharedBy == "thread":
			same = o.n == c.n
		case ca.SharedBy == "core":
			same = o.group == c.group && o.core == c.core
		case strings.HasPrefix(ca.SharedBy, "module:"):
			k := 0
			for _, ch := range strings.TrimPrefix(ca.SharedBy, "module:") {
				k = k*10 + int(ch-'0')
			}
			same = o.group == c.group && k > 0 && o.coreIndex/k == c.coreIndex/k
		case ca.SharedBy == "package":
			// Only core types that have this cache share it (Meteor
			// Lake's LP E-cores have no L3).
			same = slices.ContainsFunc(o.ct.Caches, func(oc Cache) bool {
				return oc.Level == ca.Level && oc.Type == ca.Type && oc.SharedBy == "package"
			})
		}
		if same {
			out = append(out, o.n)
		}
	}
	return out
}
