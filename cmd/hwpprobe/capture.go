// SPDX-License-Identifier: Apache-2.0

package main

import (
	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/machine/capture"
)

func init() { subcommands = append(subcommands, newCaptureCmd) }

func newCaptureCmd() *cobra.Command {
	c := &capture.Command{Version: version}
	cmd := &cobra.Command{
		Use:   "capture -o FILE [-C cpus] [--force]",
		Short: "Read this machine once into an emulator description hwpemu serves",
		Long: `capture reads the machine once: /proc/cpuinfo, the CPU lists, topology and
cache sysfs, cpufreq / intel_pstate / amd_pstate / EPB / powercap sysfs, every
CPUID leaf and subleaf of every CPU (/dev/cpu/N/cpuid) and every register of
the catalog (/dev/cpu/N/msr, where the CPU has it), and writes an emulator
description: ` + "`hwpemu run FILE -- CMD`" + ` then serves it, so hwpprobe, turbostat or
x86_energy_perf_policy run on a copy of this machine. The file says where and
when it was captured; what could not be read (without root: the devices) is
listed in it under unreadable and named on stderr, never invented. Run it as
root. See docs/capture.md.`,
		Example: `  sudo hwpprobe capture -o machine.yaml
  sudo hwpemu run machine.yaml -- hwpprobe snapshot`,
		Args: cli.ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.Run(global.root, cli.StreamsOf(cmd))
		},
	}
	c.AddFlags(cmd.Flags())
	return cmd
}
