// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/files/iocheck"
	"github.com/hwpprobe/hwpprobe/internal/reports/report"
)

func init() { subcommands = append(subcommands, newStatCmd) }

// statFlags are the options of `hwpprobe stat`.
type statFlags struct {
	out               *cli.Outputs
	reference         string
	alpha, confidence float64
}

func newStatCmd() *cobra.Command {
	var f statFlags
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
		Args: cli.ArgsUsage(func(_ *cobra.Command, args []string) error {
			if len(args) < report.StatMinFiles || len(args) > report.StatMaxFiles {
				return fmt.Errorf("stat compares %d to %d files, got %d", report.StatMinFiles, report.StatMaxFiles, len(args))
			}
			return nil
		}),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.out.Resolve(); err != nil {
				return err
			}
			if err := checkFiles("stat", iocheck.Set{Inputs: args, Outputs: f.out.IOCheck()}); err != nil {
				return err
			}
			in, err := report.ReadStatInput(args, f.reference, analysis.Options{Alpha: f.alpha, Confidence: f.confidence})
			if err != nil {
				return cli.UsageError{Err: fmt.Errorf("stat: %w", err)} // every error is the input's
			}
			st, err := report.AnalyzeStat(in)
			if err != nil {
				return cli.UsageError{Err: fmt.Errorf("stat: %w", err)}
			}
			return f.out.Render(cmd.OutOrStdout(), args, func(w io.Writer, format cli.Format) error {
				if format == cli.JSON {
					return report.WriteStatJSON(w, st, report.Info{Version: version}) // schema hwpprobe-stat/1, docs/stat.md
				}
				return report.WriteStatText(w, st)
			})
		},
	}
	fs := cmd.Flags()
	f.out = cli.AddOutputs(fs, cli.OutputSpec{Command: "stat", Stdout: textJSON, Files: textJSON}, "")
	f.out.FormatAlias(fs, "json", cli.JSON)
	fs.StringVar(&f.reference, "reference", "", "the `FILE` the others are compared with (one of the files; default the first)")
	cli.FloatVar(fs, &f.alpha, "alpha", analysis.DefaultAlpha, 0, 1, "significance level of the U test (family-wise with more than two files), in (0, 1)")
	cli.FloatVar(fs, &f.confidence, "confidence", analysis.DefaultConfidence, 0, 1, "level of the intervals (simultaneous for the ratios), in (0, 1)")
	return cmd
}
