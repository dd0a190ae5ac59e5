// SPDX-License-Identifier: Apache-2.0

package main

import (
	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/files/recording/export"
)

func init() { subcommands = append(subcommands, newExportCmd) }

func newExportCmd() *cobra.Command {
	var c export.Command
	cmd := &cobra.Command{
		Use:   "export [--format csv|parquet] [-o [FORMAT=]OUT] FILE",
		Short: "Write a recording's samples as CSV or Parquet",
		Long: `export writes the samples of every run of a recording, one row per sample and
CPU, per sample and package, and per sample and summary row, with turbostat's
column names, as CSV (the default) or as a Parquet table with typed columns.
Figures that were not measured are empty fields (CSV) or nulls (Parquet).
Without -o the output goes to standard output (Parquet not to a terminal);
with -o it replaces OUT only once complete; OUT's format is its FORMAT= prefix,
else --format's, else its extension's (.csv, .parquet). See docs/export.md.`,
		Args: cli.ArgsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error { return c.Run(args[0], cli.StreamsOf(cmd)) },
	}
	c.AddFlags(cmd.Flags())
	return cmd
}
