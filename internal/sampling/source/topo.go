// SPDX-License-Identifier: Apache-2.0

package source

import (
	"github.com/hwpprobe/hwpprobe/internal/kernel/topology"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
)

// Placement converts the topology package's description of CPUs into the
// sampler's placement: package, core and core type (topology.Uniform on a
// non-hybrid part).
func Placement(t topology.Topology) []sampler.Topo {
	out := make([]sampler.Topo, len(t.CPUs))
	for i, c := range t.CPUs {
		out[i] = sampler.Topo{CPU: c.CPU, Package: c.Package, Core: c.Core, Type: c.Type}
	}
	return out
}
