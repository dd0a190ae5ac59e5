// SPDX-License-Identifier: Apache-2.0

package main

import (
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
)

// selectCPUs resolves a -C argument against the CPUs of the system at
// root (cli.SelectCPUs).
func selectCPUs(root, spec string) (cpus.List, error) { return cli.SelectCPUs(root, spec) }
