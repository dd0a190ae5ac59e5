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
	v := verdictFlags{json: true}
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
			if err := v.out.Resolve(); err != nil {
				return err
			}
			files := iocheck.Set{Inputs: profileFiles(args), Outputs: v.out.IOCheck(), Streams: []iocheck.Stream{iocheck.Stdout(), iocheck.Stderr()}}
			if err := checkFiles("conform", files); err != nil {
				return err
			}
			out, err := v.open("conform", "", true, profileFiles(args))
			if err != nil {
				return err
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
			return writeVerdicts(cmd, v, out, cases)
		},
	}
	v.out = cli.AddOutputs(cmd.Flags(), cli.OutputSpec{Command: "conform", Stdout: []cli.Format{cli.KTAP}, Files: []cli.Format{cli.JUnit, cli.JSON}}, "")
	v.aliases(cmd.Flags())
	v.out.FileAlias(cmd.Flags(), "json", cli.JSON)
	cmd.Flags().BoolVar(&cfg.IgnoreDaemons, "ignore-daemons", false, "run although a power daemon runs")
	return cmd
}

// writeVerdicts prints the KTAP, writes the files and returns the
// kselftest exit status (0 pass, 1 fail, 4 skip).
func writeVerdicts(cmd *cobra.Command, v verdictFlags, out *verdict.Files, cases []*verdict.Case) error {
	if err := v.write(cmd, out, cases); err != nil {
		return err
	}
	if code := verdict.Exit(cases); code != verdict.ExitPass {
		return cli.ExitCodeError{Code: code, Err: errors.New("conform: " + verdict.Summary(cases))}
	}
	return nil
}
