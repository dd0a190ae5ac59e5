// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"math"
	"time"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler/watch"
)

func init() { subcommands = append(subcommands, newWatchCmd) }

func newWatchCmd() *cobra.Command {
	var (
		interval time.Duration
		cpuSpec  string
		show     string
		perCPU   bool
		count    int
	)
	cmd := &cobra.Command{
		Use:   "watch [-i 1s] [-C cpus] [--show cols] [--per-cpu] [-n count]",
		Short: "Live turbostat-like table: delivered MHz, busy, IPC, watts, temperatures, HWP requests",
		Long: `watch samples every CPU at an interval and prints turbostat's figures
(Avg_MHz, Busy%, Bzy_MHz, TSC_MHz, IPC, CoreTmp, PkgTmp, PkgWatt, CorWatt,
GFXWatt, RAMWatt) with the HWP request (min, max, desired, EPP) and EPB of
each CPU, summarised per core type (P, E, LP-E) and for the machine.
On a terminal the table refreshes in place; piped, it appends. Figures the
machine cannot give are listed with the reason, never shown as 0.
Ctrl-C stops it. See docs/watch.md.`,
		Args: cli.ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var cols []string
			if show != "" {
				var err error
				if cols, err = sampler.ParseColumns(show); err != nil {
					return cli.UsageError{Err: err}
				}
			}
			list, err := selectCPUs(global.root, cpuSpec)
			if err != nil {
				return err
			}
			return watch.Run(cmd.Context(), cmd.OutOrStdout(), watch.Config{
				Root: global.root, CPUs: list, Interval: interval, Columns: cols, PerCPU: perCPU, Count: count,
			})
		},
	}
	f := cmd.Flags()
	cli.DurationVarP(f, &interval, "interval", "i", time.Second, minInterval, maxInterval, "sampling interval (10ms to 24h)")
	cli.CPUListVar(f, &cpuSpec, "CPUs to sample, e.g. 0-3,8 (default: every online CPU)")
	f.StringVar(&show, "show", "", "columns to show, comma-separated (default: every available one): "+fmt.Sprint(sampler.ColumnNames()))
	f.BoolVar(&perCPU, "per-cpu", false, "one row per CPU besides the summaries")
	cli.IntVarP(f, &count, "num-iterations", "n", 0, 0, math.MaxInt32, "stop after this many samples (default: until Ctrl-C)")
	return cmd
}
