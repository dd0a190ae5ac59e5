package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/recording"
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
			return convertFile(cmd.ErrOrStderr(), args[0], args[1])
		},
	}
}

// convertFile converts the recording at in into out.
func convertFile(stderr io.Writer, in, out string) error {
	src, err := os.Open(in)
	if err != nil {
		return err
	}
	defer src.Close()
	if err := notInput(src, out); err != nil {
		return err
	}
	var truncated error
	err = writeFileAtomic(out, func(f *os.File) error {
		err := recording.Convert(f, src)
		if errors.Is(err, recording.ErrTruncated) {
			truncated, err = err, nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("convert %s: %w", in, err)
	}
	if truncated != nil {
		fmt.Fprintf(stderr, "hwpprobe: %s: %v; converted every whole record before it\n", in, truncated)
	}
	return nil
}

// notInput fails with a usage error when out names the open file in (the
// same file by device and inode, through any link).
func notInput(in *os.File, out string) error {
	st, err := in.Stat()
	if err != nil {
		return err
	}
	if o, err := os.Stat(out); err == nil && os.SameFile(st, o) {
		return cli.Usagef("convert: %s is the recording being converted", out)
	}
	if st.IsDir() {
		return fmt.Errorf("%s is a directory", in.Name())
	}
	return nil
}
