// SPDX-License-Identifier: Apache-2.0

package main

import (
	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/complete"
)

func init() { subcommands = append(subcommands, newApplyCmd, newRestoreCmd) }

func newApplyCmd() *cobra.Command {
	var c profile.ApplyCommand
	cmd := &cobra.Command{
		Use:   "apply PROFILE [--dry-run] [--ignore-daemons] [-- CMD [ARGS...]]",
		Short: "Apply a cpufreq profile through sysfs, verify it, and restore it after CMD",
		Long: `apply switches the machine to PROFILE (a governor, a spec such as
powersave:epp=performance,epb=0, tuned:NAME, ppd:NAME, current or @FILE; see
docs/profiles.md) through sysfs, in the order the kernel accepts, after
journalling every setting it may change. It then prints, per core type, what
the HWP/CPPC request and EPB registers hold next to what was asked.

With CMD, CMD runs under the profile (as the invoking user under sudo) and the
settings are restored when it ends, when hwpprobe gets SIGINT, SIGTERM, SIGHUP
or SIGQUIT, or on a panic; hwpprobe exits with CMD's status. Without CMD the
profile stays until 'hwpprobe restore'. See docs/apply.md.`,
		Args:              cli.ArgsUsage(cobra.MinimumNArgs(1)),
		ValidArgsFunction: complete.FirstThen(complete.Profiles(machineGovernors, false), nil),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.Run(global.root, args, cmd.ArgsLenAtDash(), cmd.OutOrStdout())
		},
	}
	c.AddFlags(cmd.Flags())
	return cmd
}

func newRestoreCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "restore",
		Short: "Restore the settings journalled by apply (after apply without CMD, or a crash)",
		Long: `restore writes back every setting in the journal that apply keeps under
/run/hwpprobe, in the order the kernel needs, reads them all back, lists any
that did not return (exit 1, the journal stays), and removes the journal.
It is idempotent: with no journal it says so and exits 0. See docs/apply.md.`,
		Args: cli.ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return profile.RestoreCommand(global.root, cmd.OutOrStdout())
		},
	}
}
