// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"os"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
	"github.com/hwpprobe/hwpprobe/internal/actions/workload"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/complete"
	"github.com/hwpprobe/hwpprobe/internal/files/iocheck"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpuid"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
	"github.com/hwpprobe/hwpprobe/internal/machine/snapshot"
	"github.com/hwpprobe/hwpprobe/msr"
)

func init() { subcommands = append(subcommands, newApplyCmd, newRestoreCmd) }

// profileUsage reports whether a profile error is bad input (exit 2):
// a malformed profile, one the machine or the kernel refuses, a missing
// cpufreq, not root, a journal left by an earlier run, a daemon.
func profileUsage(err error) bool {
	for _, e := range []error{profile.ErrSyntax, profile.ErrRefused, profile.ErrNoCPUFreq, profile.ErrNotRoot,
		profile.ErrJournalExists, profile.ErrDaemon} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// profileError maps a profile error to the exit status.
func profileError(err error) error {
	if err != nil && profileUsage(err) {
		return cli.UsageError{Err: err}
	}
	return err
}

// readSources are the read-only sources verification reads; close them
// with the returned function.
func readSources() (snapshot.Sources, func()) {
	dev, id := msr.Open(global.root), cpuid.Open(global.root)
	return snapshot.Sources{FS: sysfs.NewFS(global.root), MSR: dev, CPUID: id, EUID: os.Geteuid()},
		func() { dev.Close(); id.Close() }
}

func newApplyCmd() *cobra.Command {
	var o profile.RunOptions
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
			dash := cmd.ArgsLenAtDash()
			if (dash < 0 && len(args) != 1) || dash > 1 {
				return cli.Usagef("apply: want one PROFILE, then -- CMD")
			}
			o.Profile = args[0]
			if err := checkFiles("apply", iocheck.Set{Inputs: profileFiles(args[:1]), Streams: []iocheck.Stream{iocheck.Stdout(), iocheck.Stderr()}}); err != nil {
				return err
			}
			if dash == 1 {
				if o.Command = args[1:]; len(o.Command) == 0 {
					return cli.Usagef("apply: no CMD after --")
				}
			}
			cred, err := workload.SudoCredential(os.Getenv)
			if err != nil {
				return cli.UsageError{Err: err}
			}
			src, done := readSources()
			defer done()
			o.Options = profile.Options{FS: src.FS}
			o.Sources, o.Cred = src, cred
			o.Out, o.Stdin, o.Stdout, o.Stderr = cmd.OutOrStdout(), os.Stdin, os.Stdout, os.Stderr
			code, err := profile.Run(o)
			if err != nil {
				return profileError(err)
			}
			if code != 0 {
				return cli.ExitCodeError{Code: code}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "print the writes and the journal, change nothing")
	cmd.Flags().BoolVar(&o.IgnoreDaemons, "ignore-daemons", false, "apply although tuned, power-profiles-daemon, thermald, tlp, auto-cpufreq or system76-power runs")
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
			if os.Geteuid() != 0 {
				return cli.Usagef("restore: %v: restore writes sysfs settings; run it as root", profile.ErrNotRoot)
			}
			res, err := profile.Restore(profile.Options{FS: sysfs.NewFS(global.root)})
			profile.WriteRestore(cmd.OutOrStdout(), res)
			return err
		},
	}
}
