// SPDX-License-Identifier: Apache-2.0

package sysfs

import (
	"fmt"

	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
)

// CPUList reads a kernel CPU list file under the root, such as
// sys/devices/system/cpu/online ("0-3,8").
func (f FS) CPUList(elem ...string) (cpus.List, error) {
	s, err := f.ReadString(elem...)
	if err != nil {
		return nil, err
	}
	l, err := cpus.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path(elem...), err)
	}
	return l, nil
}

// OnlineCPUs is the kernel's list of online CPUs
// (sys/devices/system/cpu/online).
func (f FS) OnlineCPUs() (cpus.List, error) {
	return f.CPUList("sys/devices/system/cpu/online")
}

// PresentCPUs is the kernel's list of present CPUs, online or offline
// (sys/devices/system/cpu/present).
func (f FS) PresentCPUs() (cpus.List, error) {
	return f.CPUList("sys/devices/system/cpu/present")
}
