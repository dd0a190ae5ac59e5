// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/files/atomicfile"
	"github.com/hwpprobe/hwpprobe/internal/files/iocheck"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
)

func init() { subcommands = append(subcommands, newConvertCmd) }

func newConvertCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "convert OLD NEW",
		Short: "Rewrite a recording in the current format version",
		Long: `convert rewrites the recording OLD, of any format version this hwpprobe reads,
as NEW in the current version: the same records, so the same show and export
output, in the smaller and faster columnar encoding. NEW appears only once
complete (written under a temporary name, then renamed) and is never OLD itself,
by any name. A recording cut short is converted up to its last whole record.
See docs/convert.md.`,
		Args: cli.ArgsUsage(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			files := iocheck.Set{Inputs: args[:1], Outputs: []iocheck.Output{{Path: args[1]}}, Streams: []iocheck.Stream{iocheck.Stderr()}}
			if err := checkFiles("convert", files); err != nil {
				return err
			}
			return convertFile(cmd.ErrOrStderr(), args[0], args[1])
		},
	}
}

// convertFile converts the recording at in into out: never over in (by
// any name), and through a temporary file given out's name only when
// complete.
func convertFile(stderr io.Writer, in, out string) error {
	src, err := os.Open(in)
	if err != nil {
		return err
	}
	defer src.Close()
	file, err := atomicfile.Create(out, atomicfile.Options{Inputs: []string{in}, Replace: true})
	if errors.Is(err, atomicfile.ErrSameFile) {
		return cli.Usagef("convert: %w", err)
	}
	if err != nil {
		return fmt.Errorf("convert: cannot create %s: %w", out, err)
	}
	defer file.Abort()
	err = recording.Convert(file, src)
	truncated := errors.Is(err, recording.ErrTruncated)
	if err != nil && !truncated {
		return fmt.Errorf("convert %s: %w", in, err)
	}
	if err := file.Commit(); err != nil {
		return err
	}
	if truncated {
		cli.Linef(stderr, "hwpprobe", "%s: %v; converted every whole record before it", in, err)
	}
	return nil
}
