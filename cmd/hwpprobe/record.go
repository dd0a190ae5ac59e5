// SPDX-License-Identifier: Apache-2.0

package main

import (
	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/files/recording/recorder"
)

func init() { subcommands = append(subcommands, newRecordCmd) }

func newRecordCmd() *cobra.Command {
	c := &recorder.Command{Version: version}
	cmd := &cobra.Command{
		Use:   "record -o FILE [-i 100ms] [-C cpus] -- CMD [ARGS...]",
		Short: "Run a command and record what the CPUs were asked for and delivered",
		Long: `record runs CMD (as the invoking user under sudo), samples the CPUs every
interval until it exits (turbostat's Avg_MHz, Busy%, Bzy_MHz, IPC, PkgWatt...),
traces the kernel's writes to the HWP/EPB/CPPC registers, counts CMD's process
tree (task-clock, cycles, instructions), and stores a snapshot of the machine
before and after. The file is written as the run goes and stays readable if
hwpprobe is killed or the disk fills up. hwpprobe exits with CMD's status
(127 not found, 128+N killed by signal N, 130 after Ctrl-C). See docs/record.md.`,
		Args: cli.ArgsUsage(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.Run(global.root, args, cmd.ErrOrStderr())
		},
	}
	c.AddFlags(cmd.Flags())
	return cmd
}
