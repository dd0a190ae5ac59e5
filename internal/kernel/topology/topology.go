// SPDX-License-Identifier: Apache-2.0

// Package topology tells each logical CPU's package, core and core type
// (P-core, E-core, LP E-core on hybrid Intel parts), from the kernel's
// sysfs topology files and /dev/cpu/N/cpuid.
package topology

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/hwpprobe/hwpprobe/internal/kernel/cpuid"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
)

// CoreType is a hybrid core type, spelled as recordings, the sampler,
// exports and the exporter's labels spell it: "P", "E", "LP-E"; Uniform
// ("") on parts with one type of core; All ("all") names the whole
// machine in per-type summaries. Long gives the name for prose.
type CoreType string

// Core types.
const (
	Uniform CoreType = ""     // not a hybrid part (or the type is unknown)
	PCore   CoreType = "P"    // CPUID 0x1A core type 0x40 (Intel Core)
	ECore   CoreType = "E"    // core type 0x20 (Intel Atom) with an L3
	LPECore CoreType = "LP-E" // Atom core without an L3 (Meteor Lake SoC tile)
	All     CoreType = "all"  // every CPU: the whole-machine summary row
)

// Long names the core type as Intel's product documentation does
// ("P-core", "E-core", "LP E-core"); "all" for Uniform and All.
func (t CoreType) Long() string {
	switch t {
	case PCore:
		return "P-core"
	case ECore:
		return "E-core"
	case LPECore:
		return "LP E-core"
	case Uniform, All:
		return "all"
	}
	return string(t)
}

// order ranks core types for display: P, E, LP E, then uniform and all.
func (t CoreType) order() int {
	return slices.Index([]CoreType{PCore, ECore, LPECore, Uniform, All}, t)
}

// CompareTypes orders core type names for display: P, E, LP E, then
// uniform and all, then any other name by name.
func CompareTypes(a, b string) int {
	oa, ob := CoreType(a).order(), CoreType(b).order()
	if oa < 0 {
		oa = 1 << 30
	}
	if ob < 0 {
		ob = 1 << 30
	}
	return cmp.Or(cmp.Compare(oa, ob), cmp.Compare(a, b))
}

// Source says where core types came from.
type Source string

// Sources of core types.
const (
	SourceCPUID Source = "cpuid"   // /dev/cpu/N/cpuid leaves 7, 0x1A and 4
	SourceSysfs Source = "sysfs"   // /sys/devices/cpu_core|cpu_atom/cpus and cache/index*/level
	SourceNone  Source = "uniform" // no sign of a hybrid part
)

// CPU is one logical CPU's place.
type CPU struct {
	CPU      int
	Package  int
	Die      int
	Core     int
	Siblings cpus.List // SMT siblings, itself included
	Type     CoreType
}

// Topology is the CPUs asked for, in CPU order.
type Topology struct {
	CPUs   []CPU
	Hybrid bool
	Source Source
	// CPUIDErr says why /dev/cpu/N/cpuid could not be used, if it could
	// not (then core types come from sysfs).
	CPUIDErr error
}

// Group is the CPUs of one core type.
type Group struct {
	Type CoreType
	CPUs cpus.List
}

// Groups returns the CPUs grouped by core type, P-cores first.
func (t Topology) Groups() []Group {
	by := map[CoreType]cpus.List{}
	for _, c := range t.CPUs {
		by[c.Type] = append(by[c.Type], c.CPU)
	}
	var out []Group
	for typ, l := range by {
		out = append(out, Group{typ, l})
	}
	slices.SortFunc(out, func(a, b Group) int { return a.Type.order() - b.Type.order() })
	return out
}

// Detect reads the topology of the CPUs in list. Core types come from
// /dev/cpu/N/cpuid when it can be read (leaf 7 EDX bit 15 says hybrid, leaf
// 0x1A EAX 31:24 gives the type, leaf 4 the caches), else from the hybrid
// PMU cpu lists and the sysfs cache directories. id may be nil.
//
// LP E-cores: Meteor Lake's two low-power E-cores sit on the SoC tile,
// outside the compute tile's ring and its L3, so they are Atom cores whose
// cache enumeration (CPUID leaf 4, or sysfs cache/index*) stops at level 2
// (docs/kernel-facts.md section 2; Intel describes them as the SoC tile's "low power
// island" E-cores in its Meteor Lake architecture overview).
func Detect(fs sysfs.FS, id cpuid.Reader, list cpus.List) (Topology, error) {
	var t Topology
	var errs []error
	pmus, err := fs.HybridPMUs()
	if err != nil {
		errs = append(errs, err)
	}
	for _, n := range list {
		st, err := fs.Topology(n)
		if err != nil {
			errs = append(errs, err)
		}
		c := CPU{CPU: n, Package: st.PackageID, Die: st.DieID, Core: st.CoreID, Siblings: st.Siblings, Type: Uniform}
		if typ, ok, err := fromCPUID(id, n); err != nil {
			if t.CPUIDErr == nil {
				t.CPUIDErr = err
			}
		} else if ok {
			c.Type, t.Source = typ, SourceCPUID
		}
		if t.Source != SourceCPUID && pmus != nil {
			switch {
			case pmus.Core.Contains(n):
				c.Type = PCore
			case pmus.Atom.Contains(n):
				c.Type = ECore
				if len(st.CacheLevels) > 0 && !slices.Contains(st.CacheLevels, 3) {
					c.Type = LPECore
				}
			}
			t.Source = SourceSysfs
		}
		t.CPUs = append(t.CPUs, c)
	}
	if t.Source == "" {
		t.Source = SourceNone
	}
	for _, c := range t.CPUs {
		if c.Type != Uniform {
			t.Hybrid = true
		}
	}
	return t, errors.Join(errs...)
}

// fromCPUID returns the core type of cpu, ok false when the part is not
// hybrid, or an error when the device cannot be read.
func fromCPUID(id cpuid.Reader, cpu int) (CoreType, bool, error) {
	if id == nil {
		return Uniform, false, errors.New("no cpuid reader")
	}
	r0, err := id.CPUID(cpu, cpuid.LeafVendor, 0)
	if err != nil {
		return Uniform, false, err
	}
	if cpuid.Vendor(r0) != "GenuineIntel" || r0.EAX < cpuid.LeafHybrid {
		return Uniform, false, nil
	}
	r7, err := id.CPUID(cpu, cpuid.LeafExtFeatures, 0)
	if err != nil {
		return Uniform, false, err
	}
	if !cpuid.Hybrid(r7) {
		return Uniform, false, nil
	}
	r1a, err := id.CPUID(cpu, cpuid.LeafHybrid, 0)
	if err != nil {
		return Uniform, false, err
	}
	ct := cpuid.DecodeHybrid(r1a.EAX).CoreType
	hasL3 := true
	if ct == cpuid.CoreTypeAtom {
		caches, err := cpuid.Caches(id, cpu)
		if err != nil {
			return Uniform, false, err
		}
		hasL3 = cpuid.HasL3(caches)
	}
	typ, ok := FromCPUID(ct, hasL3)
	if !ok {
		return Uniform, false, fmt.Errorf("cpu%d: unknown hybrid core type %v", cpu, ct)
	}
	return typ, true, nil
}

// FromCPUID maps CPUID leaf 0x1A's core type to a CoreType: Core is a
// P-core, Atom an E-core, or an LP E-core when its caches stop below L3
// (hasL3 false). ok is false for any other value (including
// cpuid.CoreTypeNone, which leaf 0x1A reports on non-hybrid parts).
func FromCPUID(ct cpuid.CoreType, hasL3 bool) (typ CoreType, ok bool) {
	switch {
	case ct == cpuid.CoreTypeCore:
		return PCore, true
	case ct == cpuid.CoreTypeAtom && hasL3:
		return ECore, true
	case ct == cpuid.CoreTypeAtom:
		return LPECore, true
	}
	return Uniform, false
}
