// SPDX-License-Identifier: Apache-2.0

package main

import (
	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/reports/report"
)

func init() { subcommands = append(subcommands, newStatCmd) }

func newStatCmd() *cobra.Command {
	c := &report.StatCommand{Version: version}
	cmd := &cobra.Command{
		Use:   "stat [--format text|json] [-o [FORMAT=]FILE] [--alpha A] [--confidence C] [--reference FILE] A.txt B.txt [C.txt ...]",
		Short: "Compare per-run numbers from files with diff's statistics (benchstat's U test, ratio with interval)",
		Long: `stat reads per-run numbers, one file per side (2 to 8 files), and compares
each side with the reference (the first file, or --reference FILE) as diff
compares its sides: medians with their intervals, the Mann-Whitney U test,
the ratio with Moses' interval, the warnings and the verdict. With more
than two files the p-values are adjusted by Holm's method and the ratio
intervals are simultaneous (Bonferroni). A line of a file is a number
(seconds of one run), or a Go benchmark line (BenchmarkX 1 330 sec/op), the
first value of which counts; blank lines, # comments, benchstat's
"key: value" configuration lines, PASS and ok lines are skipped.`,
		Example: `  hwpprobe stat performance.txt powersave-epp.txt
  hwpprobe stat --alpha 0.1 a.txt b.txt
  hwpprobe stat --reference base.txt base.txt new1.txt new2.txt --format json`,
		Args: cli.ArgsUsage(func(_ *cobra.Command, args []string) error { return report.CheckStatArgs(args) }),
		RunE: func(cmd *cobra.Command, args []string) error { return c.Run(args, cmd.OutOrStdout()) },
	}
	c.AddFlags(cmd.Flags())
	return cmd
}
