// SPDX-License-Identifier: Apache-2.0

package source

import (
	"fmt"

	"github.com/hwpprobe/hwpprobe/internal/kernel/cpuid"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
	"github.com/hwpprobe/hwpprobe/internal/kernel/topology"
)

// OpenCPUs probes the figure sources for the CPUs of list on the system
// at root: their topology, then Open's fallbacks (perf off under
// emulation: it would count the real machine).
func OpenCPUs(root string, fs sysfs.FS, list cpus.List) (*Set, error) {
	id := cpuid.Open(root)
	defer id.Close()
	topo, err := topology.Detect(fs, id, list)
	if err != nil {
		return nil, fmt.Errorf("topology: %w", err)
	}
	emulated := fs.Emulated()
	return Open(Config{Root: root, CPUs: Placement(topo), Perf: emulated == "", Emulated: emulated, CPUID: id})
}
