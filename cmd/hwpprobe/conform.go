// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"os"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/actions/conform"
	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/files/iocheck"
	"github.com/hwpprobe/hwpprobe/internal/reports/verdict"
)

func init() { subcommands = append(subcommands, newConformCmd) }

func newConformCmd() *cobra.Command {
	var cfg conform.Config
	var junit, jsonOut string
	cmd := &cobra.Command{
		Use:   "conform [PROFILE...] [--ktap] [--junit FILE] [--json FILE]",
		Short: "Check that the kernel and the hardware do what each setting promises (KTAP, JUnit)",
		Long: `conform applies each PROFILE in turn (by default performance, powersave with
each EPP string, turbo off and a scaling_max_freq), checks per core type what the
kernel wrote to the request registers, what the cores deliver under a fixed load
(Bzy_MHz within the request unless a limit reason was active, higher EPP never
faster, no_turbo, performance at the highest level, scaling_max_freq honoured)
and that no other writer changed the settings, then restores every setting. It
prints KTAP on stdout (--ktap is the default); --junit and --json write the same
verdicts to files. Exit 0 all passed, 1 a case failed, 4 all skipped (no cpufreq,
no MSR access), 2 bad input. See docs/conform.md.`,
		Args: cli.ArgsUsage(cobra.ArbitraryArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			files := iocheck.Set{Inputs: profileFiles(args), Streams: []iocheck.Stream{iocheck.Stdout(), iocheck.Stderr()}}
			if err := checkFiles("conform", files); err != nil {
				return err
			}
			out, err := verdict.OpenFiles("hwpprobe conform", junit, jsonOut, profileFiles(args))
			if err != nil {
				return cli.Usagef("conform: %w", err)
			}
			defer out.Abort()
			src, done := readSources()
			defer done()
			if cfg.Exe, err = os.Executable(); err != nil {
				return err
			}
			cfg.Profiles, cfg.Sources, cfg.Options = args, src, profile.Options{FS: src.FS}
			cases, err := conform.Run(cfg)
			if err != nil {
				return profileError(err)
			}
			return writeVerdicts(cmd, out, cases)
		},
	}
	cmd.Flags().Bool("ktap", true, "print KTAP on stdout (the default)")
	cmd.Flags().StringVar(&junit, "junit", "", "also write the verdicts as JUnit XML to FILE")
	cmd.Flags().StringVar(&jsonOut, "json", "", "also write the verdicts as JSON to FILE")
	cmd.Flags().BoolVar(&cfg.IgnoreDaemons, "ignore-daemons", false, "run although a power daemon runs")
	return cmd
}

// writeVerdicts prints the KTAP, writes the files and returns the
// kselftest exit status (0 pass, 1 fail, 4 skip).
func writeVerdicts(cmd *cobra.Command, out *verdict.Files, cases []*verdict.Case) error {
	if err := (&verdictFlags{ktap: true}).write(cmd, out, cases); err != nil {
		return err
	}
	if code := verdict.Exit(cases); code != verdict.ExitPass {
		return cli.ExitCodeError{Code: code, Err: errors.New("conform: " + verdict.Summary(cases))}
	}
	return nil
}
