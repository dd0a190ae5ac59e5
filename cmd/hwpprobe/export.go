// SPDX-License-Identifier: Apache-2.0

package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/files/iocheck"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/files/recording/export"
)

func init() { subcommands = append(subcommands, newExportCmd) }

// exportFormats are the --format values, each with the function that
// writes a recording file in it.
var exportFormats = map[cli.Format]func(io.Writer, string) (*recording.Recording, error){
	cli.CSV:     export.WriteCSVFile,
	cli.Parquet: export.WriteParquetFile,
}

func newExportCmd() *cobra.Command {
	var out *cli.Outputs
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
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.Resolve(); err != nil {
				return err
			}
			write := exportFormats[out.Format]
			path := ""
			if len(out.Files) > 0 {
				path = out.Files[0].Path
			}
			if out.Format == cli.Parquet && path == "" && cli.IsTerminal(cmd.OutOrStdout()) {
				return cli.Usagef("export: Parquet is binary: not written to a terminal; use -o OUT.parquet or redirect standard output")
			}
			files := iocheck.Set{Inputs: args, Outputs: out.IOCheck(), Streams: []iocheck.Stream{iocheck.Stderr()}}
			if path == "" {
				files.Streams = append(files.Streams, iocheck.Stdout())
			}
			if err := checkFiles("export", files); err != nil {
				return err
			}
			return export.Run(cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], path, write)
		},
	}
	out = cli.AddOutputs(cmd.Flags(), cli.OutputSpec{Command: "export", Stdout: []cli.Format{cli.CSV, cli.Parquet}, Single: true}, "")
	out.FormatAlias(cmd.Flags(), "csv", cli.CSV)
	return cmd
}
