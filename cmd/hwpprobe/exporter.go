// SPDX-License-Identifier: Apache-2.0

package main

import (
	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/complete"
	"github.com/hwpprobe/hwpprobe/internal/machine/regs"
	"github.com/hwpprobe/hwpprobe/internal/reports/exporter"
)

func init() { subcommands = append(subcommands, newExporterCmd) }

func newExporterCmd() *cobra.Command {
	var c exporter.Command
	cmd := &cobra.Command{
		Use:   "exporter [--listen 127.0.0.1:PORT] [-C cpus] [--textfile DIR] [--user nobody] [--web.config.file FILE]",
		Short: "Prometheus exporter: HWP/CPPC requests, EPB, governors, delivered MHz, energy, limits, register writes",
		Long: `exporter serves hwpprobe's figures as Prometheus metrics on GET /metrics
(text format or OpenMetrics), or writes them for node_exporter's textfile
collector with --textfile. Figures are refreshed on a scrape, at most once
per --min-interval; the eBPF tracer counts the kernel's register writes all
the time. It starts as root, opens the devices and loads the eBPF program,
then switches to --user. Figures the machine lacks are absent and listed
once at start. Ctrl-C stops it. See docs/exporter.md.`,
		Args: cli.ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return c.Run(cmd.Context(), global.root, cmd.ErrOrStderr())
		},
	}
	c.AddFlags(cmd.Flags())
	complete.Flag(cmd, "msr", complete.List(regs.Names))
	return cmd
}
