// SPDX-License-Identifier: Apache-2.0

package main

import (
	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/complete"
	"github.com/hwpprobe/hwpprobe/internal/machine/regs"
)

func init() { subcommands = append(subcommands, newDecodeCmd) }

func newDecodeCmd() *cobra.Command {
	var c regs.DecodeCommand
	cmd := &cobra.Command{
		Use:   "decode [--format text|json] [-o [FORMAT=]FILE] [--cpu FAMILY:MODEL] REG=VALUE...",
		Short: "Decode raw register values pasted from rdmsr, turbostat or a bug report",
		Long: `decode prints the fields of raw MSR values in turbostat / x86_energy_perf_policy
wording. REG is a register name in any common spelling (HWP_REQUEST,
IA32_HWP_REQUEST, MSR_HWP_REQUEST, MSR_PKG_POWER_LIMIT, ...; case-insensitive)
or a hex address (0x771). VALUE is hexadecimal, with or without 0x (rdmsr
prints it without), or decimal with the prefix dec: (dec:31).

Registers given in the same call are context for the others: the RAPL units
(MSR_RAPL_POWER_UNIT) for power limits and energy counters, TjMax
(MSR_TEMPERATURE_TARGET) for thermal status, the group core counts
(MSR_TURBO_RATIO_LIMIT1) for MSR_TURBO_RATIO_LIMIT. Without them the decode
uses a documented default and says so. --cpu selects model-specific bit tables
(the *_PERF_LIMIT_REASONS of Haswell) and units. No register is read or
written.`,
		Example: `  hwpprobe decode IA32_HWP_REQUEST=0x80002e17
  hwpprobe decode MSR_RAPL_POWER_UNIT=0xa0e03 MSR_PKG_POWER_LIMIT=0x42820800218208
  hwpprobe decode --format json 0xc00102b0=e295290f
  hwpprobe decode --cpu 6:69 0x690=0x14000400
  hwpprobe decode --list`,
		ValidArgsFunction: complete.Words(regs.Names, "=", false),
		Args:              cli.ArgsUsage(func(_ *cobra.Command, args []string) error { return c.CheckArgs(args) }),
		RunE:              func(cmd *cobra.Command, args []string) error { return c.Run(args, cmd.OutOrStdout()) },
	}
	c.AddFlags(cmd.Flags())
	return cmd
}
