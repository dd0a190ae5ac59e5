// SPDX-License-Identifier: Apache-2.0

package main

import (
	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/actions/conform"
	"github.com/hwpprobe/hwpprobe/internal/cli"
)

func init() { subcommands = append(subcommands, newConformCmd) }

func newConformCmd() *cobra.Command {
	var c conform.Command
	cmd := &cobra.Command{
		Use:   "conform [PROFILE...] [-o [FORMAT=]FILE]",
		Short: "Check that the kernel and the hardware do what each setting promises (KTAP, JUnit)",
		Long: `conform applies each PROFILE in turn (by default performance, powersave with
each EPP string, turbo off and a scaling_max_freq), checks per core type what the
kernel wrote to the request registers, what the cores deliver under a fixed load
(Bzy_MHz within the request unless a limit reason was active, higher EPP never
faster, no_turbo, performance at the highest level, scaling_max_freq honoured)
and that no other writer changed the settings, then restores every setting. It
prints KTAP on stdout (--format ktap, the only one); -o junit=FILE and
-o json=FILE write the same verdicts to files. Exit 0 all passed, 1 a case failed, 4 all skipped (no cpufreq,
no MSR access), 2 bad input. See docs/conform.md.`,
		Args: cli.ArgsUsage(cobra.ArbitraryArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.Run(global.root, args, cmd.OutOrStdout())
		},
	}
	c.AddFlags(cmd.Flags())
	return cmd
}
