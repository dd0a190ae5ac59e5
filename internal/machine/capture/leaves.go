// SPDX-License-Identifier: Apache-2.0

package capture

import (
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpuid"
)

// leafRegs is one CPUID answer; any marks a leaf that ignores the subleaf.
type leafRegs struct {
	leaf, sub uint32
	any       bool
	regs      [4]uint32
}

// Bounds on what one CPU is asked, whatever its maximum leaves say.
const (
	maxBasicLeaves = 0x100
	maxSubleaves   = 64
)

// readLeaves reads every leaf of cpu: the basic range up to leaf 0's EAX,
// the hypervisor range (when the CPU is a guest) and the extended range
// up to 0x80000000's EAX, with each leaf's subleaves (see subleaves).
func readLeaves(dev cpuid.Reader, cpu int, hypervisor bool) ([]leafRegs, error) {
	var out []leafRegs
	ranges := []uint32{0}
	if hypervisor {
		ranges = append(ranges, 0x40000000)
	}
	ranges = append(ranges, 0x80000000)
	for _, base := range ranges {
		top, err := dev.CPUID(cpu, base, 0)
		if err != nil {
			return nil, err
		}
		last := top.EAX
		if last < base || last-base >= maxBasicLeaves {
			last = base // no such range (or an implausible one): only its first leaf
			if base == 0 {
				last = min(top.EAX, maxBasicLeaves-1)
			}
		}
		for leaf := base; ; leaf++ {
			l, err := subleaves(dev, cpu, leaf)
			if err != nil {
				return nil, err
			}
			out = append(out, l...)
			if leaf == last {
				break
			}
		}
	}
	return out, nil
}

func regsOf(r cpuid.Regs) [4]uint32 { return [4]uint32{r.EAX, r.EBX, r.ECX, r.EDX} }

// subleaves reads one leaf. Leaves with subleaves are enumerated as the
// SDM and APM define their ends: 4 and 0x8000001D until the cache type is
// 0; 0xB, 0x1F and 0x80000026 until the level type is 0 (that last subleaf
// included); 7, 0x14, 0x17, 0x18, 0x1D, 0x20 and 0x24 up to subleaf 0's
// EAX; 0xD all 64 (keeping the non-zero ones). Any other leaf whose
// subleaves 0, 1 and 2 answer alike ignores the subleaf; otherwise its
// non-zero subleaves below 64 are kept.
func subleaves(dev cpuid.Reader, cpu int, leaf uint32) ([]leafRegs, error) {
	var out []leafRegs
	read := func(sub uint32) ([4]uint32, error) {
		r, err := dev.CPUID(cpu, leaf, sub)
		return regsOf(r), err
	}
	s0, err := read(0)
	if err != nil {
		return nil, err
	}
	keep := func(sub uint32, r [4]uint32) { out = append(out, leafRegs{leaf: leaf, sub: sub, regs: r}) }
	until := func(done func([4]uint32) bool) error {
		keep(0, s0)
		for sub, r := uint32(1), s0; !done(r) && sub < maxSubleaves; sub++ {
			if r, err = read(sub); err != nil {
				return err
			}
			keep(sub, r)
		}
		return nil
	}
	switch leaf {
	case 4, 0x8000001D:
		return out, until(func(r [4]uint32) bool { return r[0]&0x1f == 0 })
	case 0xB, 0x1F, 0x80000026:
		return out, until(func(r [4]uint32) bool { return r[2]>>8&0xff == 0 })
	case 7, 0x14, 0x17, 0x18, 0x1D, 0x20, 0x24:
		n := min(s0[0], maxSubleaves-1)
		return out, until(func([4]uint32) bool { return uint32(len(out)) > n })
	case 0xD:
		return nonZero(read, s0, leaf, true)
	}
	s1, err := read(1)
	if err != nil {
		return nil, err
	}
	s2, err := read(2)
	if err != nil {
		return nil, err
	}
	if s0 == s1 && s1 == s2 {
		return []leafRegs{{leaf: leaf, any: true, regs: s0}}, nil
	}
	return nonZero(read, s0, leaf, false)
}

// nonZero reads subleaves 0 to 63 and keeps subleaf 0 (and 1 when
// keepOne) and every non-zero one: an unlisted subleaf of a listed leaf
// reads as zeros.
func nonZero(read func(uint32) ([4]uint32, error), s0 [4]uint32, leaf uint32, keepOne bool) ([]leafRegs, error) {
	out := []leafRegs{{leaf: leaf, regs: s0}}
	for sub := uint32(1); sub < maxSubleaves; sub++ {
		r, err := read(sub)
		if err != nil {
			return nil, err
		}
		if r != ([4]uint32{}) || (keepOne && sub == 1) {
			out = append(out, leafRegs{leaf: leaf, sub: sub, regs: r})
		}
	}
	return out, nil
}
