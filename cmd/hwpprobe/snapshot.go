// SPDX-License-Identifier: Apache-2.0

package main

import (
	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/machine/snapshot"
)

func init() { subcommands = append(subcommands, newSnapshotCmd) }

func newSnapshotCmd() *cobra.Command {
	var c snapshot.Command
	cmd := &cobra.Command{
		Use:   "snapshot [-C cpus] [--format text|json] [-o [FORMAT=]FILE]",
		Short: "Show cpufreq sysfs settings next to the HWP/CPPC/EPB registers, per core type",
		Long: `snapshot shows the machine as the kernel presents it (cpufreq driver, governor,
energy_performance_preference, energy_perf_bias, scaling limits, intel_pstate
and amd-pstate settings) next to what the registers hold (HWP_REQUEST,
HWP_CAPABILITIES, EPB, AMD CPPC) for every CPU, grouped by core type, with
package facts (RAPL units, TDP, PL1/PL2, TjMax, temperatures, turbo ratios).
It flags every place where sysfs and a register disagree and explains the
kernel rule behind it, and reports what could not be read, why, and how to
fix it. It exits 0 with whatever it could read. See docs/snapshot.md.`,
		Args: cli.ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return c.Run(global.root, cmd.OutOrStdout()) },
	}
	c.AddFlags(cmd.Flags())
	return cmd
}
