// SPDX-License-Identifier: Apache-2.0

package main

import (
	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/actions/experiment"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/complete"
)

func init() { subcommands = append(subcommands, newExplainCmd) }

func newExplainCmd() *cobra.Command {
	var o experiment.Options
	cmd := &cobra.Command{
		Use:   "explain A B [-- CMD] | explain EXPERIMENT",
		Short: "Which field of the request register (min, max, EPP, EPB ...) makes B faster or slower than A",
		Long: `explain A B reads what profiles A and B leave in the HWP/CPPC request
register and EPB on this machine (each applied in turn and restored, as matrix
does), derives a chain of profiles from A to B in which each step changes one
field through the kernel's own knobs (first a register twin of A on B's
settings), with two changed fields also the fourth corner of the 2x2 design,
runs the chain as one N-side experiment (as diff does: interleaved, restored,
every run's settings checked) and attributes the change of time and energy
from A to B to the steps: each field causes a difference, is shown not to
(equivalent within --precision), or is undecided; the interaction too.
--dry-run prints the chain with each step's registers per core type and runs
nothing. explain EXPERIMENT attributes again from the saved file. Exit status
as diff's. See docs/explain.md.`,
		Args:              cli.ArgsUsage(cobra.MinimumNArgs(1)),
		ValidArgsFunction: complete.Profiles(machineGovernors, true),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Root, o.Version = global.root, version
			return o.Run(cmd, args)
		},
	}
	o.AddExplainFlags(cmd.Flags())
	return cmd
}
