package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/analysis"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/report"
)

func init() { subcommands = append(subcommands, newDiffCmd) }

// exitCrossed is diff's status when a --fail-if threshold is crossed.
const exitCrossed = 3

type diffOptions struct {
	alpha, confidence float64
	markdown, json    string
	failIf            []string
	keepDisturbed     bool
}

func newDiffCmd() *cobra.Command {
	o := &diffOptions{}
	cmd := &cobra.Command{
		Use:   "diff EXPERIMENT | diff A.hwpr B.hwpr",
		Short: "Compare two sides of an experiment: is B faster than A, and what did the hardware get",
		Long: `diff analyses an experiment file (the runs of two sides) or two recordings
(each the runs of one side, e.g. two 'record' runs from different kernels):
per side and core type the HWP request and EPB the registers held and the
kernel wrote (by process), delivered MHz, power, energy per run, temperatures
and limit reasons; then what differs, and the verdict with benchstat's
statistics (median, exact interval, Mann-Whitney U, "~" when not
significant) and the ratio B/A with a distribution-free interval.
Exit status: 0 verdict within thresholds, 1 error, 2 bad input (including an
incomplete file, whose complete runs are still analysed), 3 a --fail-if
threshold crossed. See docs/diff.md.`,
		Args: cli.ArgsUsage(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDiff(cmd.OutOrStdout(), o, args)
		},
	}
	f := cmd.Flags()
	f.Float64Var(&o.alpha, "alpha", analysis.DefaultAlpha, "significance level of the U test")
	f.Float64Var(&o.confidence, "confidence", analysis.DefaultConfidence, "level of the intervals")
	f.StringVar(&o.markdown, "markdown", "", "also write the report as Markdown to FILE (for a bug tracker)")
	f.StringVar(&o.json, "json", "", "also write the report as JSON to FILE (schema "+report.Schema+")")
	f.StringArrayVar(&o.failIf, "fail-if", nil, "exit 3 when e.g. 'B slower than A by 5%' (repeatable)")
	f.BoolVar(&o.keepDisturbed, "keep-disturbed", false, "count runs whose settings another writer changed")
	return cmd
}

func runDiff(stdout io.Writer, o *diffOptions, args []string) error {
	d := report.DiffOptions{Paths: args, KeepDisturbed: o.keepDisturbed, Markdown: o.markdown, JSON: o.json,
		Stats: analysis.Options{Alpha: o.alpha, Confidence: o.confidence}, Info: report.Info{Version: version}}
	if o.alpha <= 0 || o.alpha >= 1 || o.confidence <= 0 || o.confidence >= 1 {
		return cli.Usagef("diff: --alpha and --confidence must be in (0, 1)")
	}
	for _, s := range o.failIf {
		t, err := analysis.ParseThreshold(s)
		if err != nil {
			return cli.UsageError{Err: err}
		}
		d.Thresholds = append(d.Thresholds, t)
	}
	for _, p := range args {
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			return cli.Usagef("diff: %q is not a recording file (this hwpprobe compares recordings: diff EXPERIMENT, or diff A.hwpr B.hwpr)", p)
		}
	}
	err := report.Diff(stdout, d)
	var in report.InputError
	switch {
	case errors.Is(err, report.ErrCrossed):
		return cli.ExitCodeError{Code: exitCrossed, Err: err}
	case errors.As(err, &in):
		return cli.UsageError{Err: fmt.Errorf("diff: %w", in.Err)}
	case err != nil:
		return fmt.Errorf("diff: %w", err)
	}
	return nil
}
