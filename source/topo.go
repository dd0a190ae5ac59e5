package source

import (
	"fmt"

	"github.com/hwpprobe/hwpprobe/cpuid"
	"github.com/hwpprobe/hwpprobe/sampler"
	"github.com/hwpprobe/hwpprobe/sysfs"
)

// Topology places each CPU of list: package and core from
// /sys/devices/system/cpu/cpuN/topology, core type from CPUID leaf 0x1A
// when leaf 7 says the part is hybrid (0x40 Core = P; 0x20 Atom = E, or
// LP-E when the CPU has no L3, as Meteor Lake's low-power E-cores). A
// nil or failing cpuid reader leaves the type unknown.
//
// This is the minimal placement the sampler needs until the topology
// package provides it.
func Topology(fs sysfs.FS, id cpuid.Reader, list []int) ([]sampler.Topo, error) {
	out := make([]sampler.Topo, len(list))
	hybrid := false
	if id != nil && len(list) > 0 {
		if r, err := id.CPUID(list[0], 7, 0); err == nil {
			hybrid = cpuid.Hybrid(r)
		}
	}
	for i, c := range list {
		dir := fmt.Sprintf("sys/devices/system/cpu/cpu%d/topology", c)
		pkg, err := fs.ReadInt(dir, "physical_package_id")
		if err != nil {
			return nil, fmt.Errorf("cpu%d: package: %w", c, err)
		}
		core, err := fs.ReadInt(dir, "core_id")
		if err != nil {
			return nil, fmt.Errorf("cpu%d: core: %w", c, err)
		}
		out[i] = sampler.Topo{CPU: c, Package: int(pkg), Core: int(core)}
		if hybrid {
			out[i].Type = coreType(id, c)
		}
	}
	return out, nil
}

func coreType(id cpuid.Reader, c int) sampler.CoreType {
	r, err := id.CPUID(c, 0x1a, 0)
	if err != nil {
		return sampler.CoreUnknown
	}
	switch cpuid.DecodeHybrid(r.EAX).CoreType {
	case cpuid.CoreTypeCore:
		return sampler.CorePerformance
	case cpuid.CoreTypeAtom:
		caches, err := cpuid.Caches(id, c)
		if err == nil && !cpuid.HasL3(caches) {
			return sampler.CoreLowPowerE
		}
		return sampler.CoreEfficient
	}
	return sampler.CoreUnknown
}
