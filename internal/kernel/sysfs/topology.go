// SPDX-License-Identifier: Apache-2.0

package sysfs

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
)

// CPUTopology is a CPU's place in the machine as
// /sys/devices/system/cpu/cpuN/topology shows it
// (Documentation/admin-guide/cputopology.rst). IDs the kernel does not
// export are -1.
type CPUTopology struct {
	PackageID int       // physical_package_id
	DieID     int       // die_id
	ClusterID int       // cluster_id
	CoreID    int       // core_id
	Siblings  cpus.List // core_cpus_list (SMT siblings, itself included)
	// CacheLevels lists cpuN/cache/indexK/level for K = 0, 1, ...: on
	// Meteor Lake the LP E-cores have no level 3.
	CacheLevels []int
}

// Topology reads the topology and cache directories of cpu.
func (f FS) Topology(cpu int) (CPUTopology, error) {
	dir := cpuDir(cpu) + "/topology"
	t := CPUTopology{PackageID: -1, DieID: -1, ClusterID: -1, CoreID: -1}
	if !f.Exists(dir) {
		return t, fmt.Errorf("cpu%d: %s: %w", cpu, f.Path(dir), errNoTopology)
	}
	r := optReader{fs: f, dir: dir}
	for _, x := range []struct {
		dst  *int
		name string
	}{{&t.PackageID, "physical_package_id"}, {&t.DieID, "die_id"}, {&t.ClusterID, "cluster_id"}, {&t.CoreID, "core_id"}} {
		if v := r.int(x.name); v != nil {
			*x.dst = int(*v)
		}
	}
	if s := r.str("core_cpus_list"); s != nil {
		l, err := cpus.Parse(*s)
		if err != nil {
			r.errs = append(r.errs, err)
		}
		t.Siblings = l
	} else if s := r.str("thread_siblings_list"); s != nil {
		l, err := cpus.Parse(*s)
		if err != nil {
			r.errs = append(r.errs, err)
		}
		t.Siblings = l
	}
	c := optReader{fs: f, dir: cpuDir(cpu) + "/cache"}
	for i := 0; ; i++ {
		v := c.int("index" + strconv.Itoa(i) + "/level")
		if v == nil {
			break
		}
		t.CacheLevels = append(t.CacheLevels, int(*v))
	}
	return t, errors.Join(append(r.errs, c.errs...)...)
}

var errNoTopology = errors.New("no topology directory")

// HybridPMUs are the CPU lists of the hybrid PMU devices: the kernel
// registers /sys/devices/cpu_core and /sys/devices/cpu_atom on hybrid Intel
// parts (arch/x86/events/intel/core.c) instead of /sys/devices/cpu.
type HybridPMUs struct {
	Core cpus.List // cpu_core/cpus: P-cores
	Atom cpus.List // cpu_atom/cpus: E-cores (and LP E-cores)
}

// HybridPMUs reads cpu_core/cpus and cpu_atom/cpus; nil, nil when neither
// exists (not a hybrid part, or not Intel).
func (f FS) HybridPMUs() (*HybridPMUs, error) {
	core, cerr := f.CPUList("sys/devices/cpu_core/cpus")
	atom, aerr := f.CPUList("sys/devices/cpu_atom/cpus")
	if IsNotExist(cerr) && IsNotExist(aerr) {
		return nil, nil
	}
	var errs []error
	for _, err := range []error{cerr, aerr} {
		if err != nil && !IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	return &HybridPMUs{Core: core, Atom: atom}, errors.Join(errs...)
}
