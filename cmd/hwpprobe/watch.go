// SPDX-License-Identifier: Apache-2.0

package main

import (
	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler/watch"
)

func init() { subcommands = append(subcommands, newWatchCmd) }

func newWatchCmd() *cobra.Command {
	var c watch.Command
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
			return c.Run(cmd.Context(), global.root, cmd.OutOrStdout())
		},
	}
	c.AddFlags(cmd.Flags())
	return cmd
}
