// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
)

// selectCPUs resolves a -C argument against the CPUs of the system at
// root: every online CPU when spec is empty; a CPU that is absent or
// offline is a usage error.
func selectCPUs(root, spec string) (cpus.List, error) {
	online, err := sysfs.NewFS(root).OnlineCPUs()
	if err != nil {
		return nil, fmt.Errorf("online CPUs: %w", err)
	}
	present, _ := sysfs.NewFS(root).PresentCPUs()
	list, err := cpus.Select(spec, online, present)
	if err != nil {
		return nil, cli.UsageError{Err: err}
	}
	return list, nil
}
