// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/ebpf/tracefmt"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/complete"
	"github.com/hwpprobe/hwpprobe/internal/files/iocheck"
	"github.com/hwpprobe/hwpprobe/internal/machine/regs"
	"github.com/hwpprobe/hwpprobe/internal/reports/exporter"
)

func init() { subcommands = append(subcommands, newExporterCmd) }

func newExporterCmd() *cobra.Command {
	var (
		o    exporter.Options
		msrs string
	)
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
			if o.TextfileDir != "" && !cmd.Flags().Changed("listen") {
				o.Listen = ""
			}
			if o.Listen == "" && o.TextfileDir == "" {
				return cli.Usagef("exporter: nothing to do: --listen is empty and no --textfile DIR is given")
			}
			if o.Listen != "" {
				if _, _, err := net.SplitHostPort(o.Listen); err != nil {
					return cli.Usagef("exporter: --listen %q: %w (want HOST:PORT, e.g. 127.0.0.1:9977)", o.Listen, err)
				}
			}
			// The --textfile directory is exporter.Run's to check: it
			// must be writable by --user, not by root (ErrNotDir).
			files := iocheck.Set{Inputs: []string{o.WebConfigFile}, Streams: []iocheck.Stream{iocheck.Stdout(), iocheck.Stderr()}}
			if err := checkFiles("exporter", files); err != nil {
				return err
			}
			var err error
			if o.MSRs, err = tracefmt.ParseMSRFilter(msrs); err != nil {
				return cli.Usagef("--msr: %w", err)
			}
			o.Root, o.Log = global.root, cmd.ErrOrStderr()
			err = exporter.Run(cmd.Context(), o)
			if errors.Is(err, exporter.ErrBadCPUList) || errors.Is(err, exporter.ErrBadUser) || errors.Is(err, exporter.ErrNotDir) ||
				errors.Is(err, exporter.ErrWebConfig) {
				return cli.UsageError{Err: err}
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Listen, "listen", "127.0.0.1:9977", "address to serve /metrics on")
	cli.CPUListVar(f, &o.CPUs, "CPUs to export, e.g. 0-3,8 (default: every online CPU)")
	f.StringVar(&o.TextfileDir, "textfile", "", "write DIR/"+exporter.TextfileName+" for node_exporter's textfile collector (then no listener unless --listen)")
	cli.DurationVarP(f, &o.TextfileInterval, "textfile-interval", "", 15*time.Second, 100*time.Millisecond, 24*time.Hour, "how often --textfile rewrites the file")
	f.StringVar(&o.WebConfigFile, "web.config.file", "", "exporter-toolkit web config (TLS, basic auth), as node_exporter's; it and its certificates must stay readable by --user")
	f.StringVar(&o.User, "user", "nobody", "user to switch to after opening the devices (root: stay root)")
	cli.DurationVarP(f, &o.MinInterval, "min-interval", "", exporter.DefaultMinInterval, 10*time.Millisecond, time.Hour,
		"shortest time between two refreshes; scrapes in between get the same figures")
	f.StringVar(&msrs, "msr", tracefmt.FormatMSRs(tracefmt.DefaultMSRs), "registers whose writes are counted: names or hex numbers, comma-separated")
	complete.Flag(cmd, "msr", complete.List(regs.Names))
	return cmd
}
