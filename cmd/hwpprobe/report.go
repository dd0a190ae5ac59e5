// SPDX-License-Identifier: Apache-2.0

package main

import (
	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/reports/report"
)

func init() { subcommands = append(subcommands, newReportCmd) }

func newReportCmd() *cobra.Command {
	c := &report.PageCommand{PageOptions: report.PageOptions{Info: report.Info{Version: version}}}
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
		RunE: func(_ *cobra.Command, args []string) error { return c.Run(args) },
	}
	c.AddFlags(cmd.Flags())
	return cmd
}
