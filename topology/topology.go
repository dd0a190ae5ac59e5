// Package topology tells each logical CPU's package, core and core type
// (P-core, E-core, LP E-core on hybrid Intel parts), from the kernel's
// sysfs topology files and /dev/cpu/N/cpuid.
package topology

import (
	"errors"
	"fmt"
	"slices"

	"github.com/hwpprobe/hwpprobe/cpuid"
	"github.com/hwpprobe/hwpprobe/cpus"
	"github.com/hwpprobe/hwpprobe/sysfs"
)

// CoreType is a hybrid core type; Uniform on parts with one type of core.
type CoreType string

// Core types, named as Intel's product documentation names them.
const (
	Uniform CoreType = "all"       // not a hybrid part
	PCore   CoreType = "P-core"    // CPUID 0x1A core type 0x40 (Intel Core)
	ECore   CoreType = "E-core"    // core type 0x20 (Intel Atom) with an L3
	LPECore CoreType = "LP E-core" // Atom core without an L3 (Meteor Lake SoC tile)
)

// order ranks core types for display: P, E, LP E, then uniform.
func (t CoreType) order() int {
	return slices.Index([]CoreType{PCore, ECore, LPECore, Uniform}, t)
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
// (design.md section 2; Intel describes them as the SoC tile's "low power
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
	switch ct := cpuid.DecodeHybrid(r1a.EAX).CoreType; ct {
	case cpuid.CoreTypeCore:
		return PCore, true, nil
	case cpuid.CoreTypeAtom:
		caches, err := cpuid.Caches(id, cpu)
		if err != nil {
			return Uniform, false, err
		}
		if !cpuid.HasL3(caches) {
			return LPECore, true, nil
		}
		return ECore, true, nil
	default:
		return Uniform, false, fmt.Errorf("cpu%d: unknown hybrid core type %v", cpu, ct)
	}
}
