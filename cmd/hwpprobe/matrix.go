// SPDX-License-Identifier: Apache-2.0

package main

import (
	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/complete"
)

func init() { subcommands = append(subcommands, newMatrixCmd, newProfilesCmd) }

func newMatrixCmd() *cobra.Command {
	var c profile.MatrixCommand
	cmd := &cobra.Command{
		Use:   "matrix PROFILE... [--format text|json|ktap] [-o [FORMAT=]FILE] [--expect FILE]",
		Short: "Apply each profile in turn and tabulate what the registers hold per core type",
		Long: `matrix applies each PROFILE in turn (each from the original settings, nothing
else runs), reads back per core type what the HWP/CPPC request register and EPB
hold (or the kernel's refusal), restores the settings, and prints the table.
With --expect FILE it compares the table with FILE and exits 1 on any
difference, printing it: for kernel CI, to catch an update that changes what
a governor or EPP string sends the hardware. --format ktap prints the
comparison as KTAP on stdout (a case per line; the table goes to stderr),
-o junit=FILE writes it as JUnit XML. See docs/matrix.md.`,
		Args:              cli.ArgsUsage(cobra.MinimumNArgs(1)),
		ValidArgsFunction: complete.Profiles(machineGovernors, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.Run(global.root, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	c.AddFlags(cmd.Flags())
	return cmd
}

func newProfilesCmd() *cobra.Command {
	var c profile.CatalogCommand
	cmd := &cobra.Command{
		Use:   "profiles [--format text|json] [-o [FORMAT=]FILE]",
		Short: "List what profiles can name here: governors, EPP strings and their values, EPB, TuneD and ppd profiles",
		Long:  `profiles lists the machine's governors, its EPP strings with the register values the kernel writes for them on this model, the EPB names and values, the global settings, and the TuneD and power-profiles-daemon profiles installed. See docs/profiles.md.`,
		Args:  cli.ArgsUsage(cobra.NoArgs),
		RunE:  func(cmd *cobra.Command, _ []string) error { return c.Run(global.root, cmd.OutOrStdout()) },
	}
	c.AddFlags(cmd.Flags())
	return cmd
}
