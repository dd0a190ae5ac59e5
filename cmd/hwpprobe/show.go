// SPDX-License-Identifier: Apache-2.0

package main

import (
	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/files/recording/summary"
)

func init() { subcommands = append(subcommands, newShowCmd) }

func newShowCmd() *cobra.Command {
	var c summary.ShowCommand
	cmd := &cobra.Command{
		Use:   "show [--run N] FILE",
		Short: "Print the summary of a recording",
		Long: `show prints what record printed at the end of a run: the machine, each run's
command, outcome and settings, time-weighted turbostat averages per core type
and for the machine, package energy, the kernel's register writes and the
process tree's counters. A recording cut short (crash, kill, full disk) is
shown up to its last whole record, with a line saying so. See docs/show.md.`,
		Args: cli.ArgsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error { return c.Run(args[0], cmd.OutOrStdout()) },
	}
	c.AddFlags(cmd.Flags())
	return cmd
}
