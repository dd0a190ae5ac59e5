package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

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
			rec, err := recording.ReadFile(args[0])
			if err != nil {
				return err
			}
			if err := rec.Issue(); err != nil && !errors.Is(err, recording.ErrCorrupt) {
				fmt.Fprintf(cmd.ErrOrStderr(), "hwpprobe: %s: %v; exporting what was read\n", args[0], err)
			}
			if out == "" {
				err = export.WriteCSV(cmd.OutOrStdout(), rec)
			} else {
				err = writeFileAtomic(out, func(f *os.File) error { return export.WriteCSV(f, rec) })
			}
			if err != nil {
				return err
			}
			if err := corruptError(args[0], rec); err != nil {
				return fmt.Errorf("%w; exported what was read before it", err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asCSV, "csv", false, "write CSV (the only format so far)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write to this file instead of standard output")
	return cmd
}

// writeFileAtomic writes path through a temporary file in the same
// directory, renamed over path only when write and sync succeed, so that a
// failure never leaves a half-written file.
func writeFileAtomic(path string, write func(*os.File) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("cannot create %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
