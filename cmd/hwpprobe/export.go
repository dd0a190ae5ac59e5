package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/atomicfile"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/recording"
	"github.com/hwpprobe/hwpprobe/recording/export"
)

func init() { subcommands = append(subcommands, newExportCmd) }

func newExportCmd() *cobra.Command {
	var asCSV bool
	var out string
	cmd := &cobra.Command{
		Use:   "export --csv [-o OUT.csv] FILE",
		Short: "Write a recording's samples as CSV",
		Long: `export writes the samples of every run of a recording, one row per sample and
CPU, per sample and package, and per sample and summary row, with turbostat's
column names. Figures that were not measured are empty fields. Without -o the
CSV goes to standard output; with -o it replaces OUT.csv only once complete.
See docs/export.md.`,
		Args: cli.ArgsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !asCSV {
				return cli.Usagef("export: choose a format: --csv")
			}
			return runExport(cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], out)
		},
	}
	cmd.Flags().BoolVar(&asCSV, "csv", false, "write CSV (the only format so far)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write to this file instead of standard output")
	return cmd
}

// runExport writes the CSV of the recording at in to stdout, or to the
// file out: never over the recording itself (by any name), and through a
// temporary file renamed to out only when complete.
func runExport(stdout, stderr io.Writer, in, out string) error {
	var file *atomicfile.File
	if out != "" {
		var err error
		file, err = atomicfile.Create(out, atomicfile.Options{Inputs: []string{in}, Replace: true})
		if errors.Is(err, atomicfile.ErrSameFile) {
			return cli.Usagef("export: -o %w", err)
		}
		if err != nil {
			return fmt.Errorf("export: cannot create %s: %w", out, err)
		}
		defer file.Abort()
		stdout = file
	}
	rec, err := export.WriteCSVFile(stdout, in)
	if rec == nil {
		return err
	}
	if err != nil {
		return fmt.Errorf("export: write %s: %w", out, err)
	}
	if err := rec.Issue(); err != nil && !errors.Is(err, recording.ErrCorrupt) {
		cli.Linef(stderr, "hwpprobe", "%s: %v; exported what was read", in, err)
	}
	if file != nil {
		if err := file.Commit(); err != nil {
			return err
		}
	}
	if err := corruptError(in, rec); err != nil {
		return fmt.Errorf("%w; exported what was read before it", err)
	}
	return nil
}
