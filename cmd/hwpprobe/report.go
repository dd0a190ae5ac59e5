// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/files/iocheck"
	"github.com/hwpprobe/hwpprobe/internal/reports/report"
	"github.com/hwpprobe/hwpprobe/internal/reports/report/png"
)

func init() { subcommands = append(subcommands, newReportCmd) }

func newReportCmd() *cobra.Command {
	o := report.PageOptions{Info: report.Info{Version: version}}
	cmd := &cobra.Command{
		Use:   "report FILE... -o REPORT.html [--png DIR] [--per-cpu]",
		Short: "Write one self-contained HTML page with charts for a recording or an experiment",
		Long: `report writes one HTML page, with everything inline (it fetches nothing, so it
opens from a mail attachment or a CI artifact), for a recording of record, for
an experiment of diff, or for two recordings compared as diff compares them:
timelines per side (MHz and Busy% per core type, package and core power with
the power limits, temperatures, limit reasons, the HWP request, the kernel's
register writes), every run's time and energy with the medians and intervals,
the verdict, the HWP request and EPB per core type side by side, what
differs, and the machine. --png DIR also writes the main charts as PNG files
(mhz.png, busy.png, power.png, temperature.png, run-times.png). The page is written whole or not at all, never over
an input. Exit status: 0 written, 1 error, 2 bad input (a file that is not a
recording, empty or corrupt: no page; a file cut short: the page of what it
holds, which says what is missing). See docs/report.md.`,
		Args: cli.ArgsUsage(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Output == "" {
				return cli.Usagef("report: -o REPORT.html is required")
			}
			if a, c := o.Stats.Alpha, o.Stats.Confidence; a <= 0 || a >= 1 || c <= 0 || c >= 1 {
				return cli.Usagef("report: --alpha and --confidence must be in (0, 1)")
			}
			o.Paths = args
			files := iocheck.Set{Inputs: args, Outputs: []iocheck.Output{{Name: "-o", Path: o.Output}}, Streams: []iocheck.Stream{iocheck.Stderr()}}
			if o.PNG != "" {
				for _, name := range pngFiles {
					files.Outputs = append(files.Outputs, iocheck.Output{Name: "--png", Path: filepath.Join(o.PNG, name), MakeDirs: true})
				}
			}
			if err := checkFiles("report", files); err != nil {
				return err
			}
			return reportExit(report.Page(o))
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "", "the HTML file to write (replaced whole)")
	f.StringVar(&o.PNG, "png", "", "also write the main charts as PNG files into DIR")
	f.BoolVar(&o.PerCPU, "per-cpu", false, "add a chart of every CPU's delivered frequency (larger page)")
	cli.FloatVar(f, &o.Stats.Alpha, "alpha", analysis.DefaultAlpha, 0, 1, "significance level of the U test, in (0, 1)")
	cli.FloatVar(f, &o.Stats.Confidence, "confidence", analysis.DefaultConfidence, 0, 1, "level of the intervals, in (0, 1)")
	f.BoolVar(&o.KeepDisturbed, "keep-disturbed", false, "count runs whose settings another writer changed")
	return cmd
}

// pngFiles are the files report --png writes into its directory.
var pngFiles = []string{png.FileMHz, png.FileBusy, png.FilePower, png.FileTemperature, png.FileRunTimes}

// reportExit maps report.Page's errors to exit statuses. Its other
// errors already begin with "report:".
func reportExit(err error) error {
	var in report.InputError
	if errors.As(err, &in) {
		return cli.UsageError{Err: fmt.Errorf("report: %w", in.Err)}
	}
	return err
}
