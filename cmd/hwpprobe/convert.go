// SPDX-License-Identifier: Apache-2.0

package main

import (
	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/cli"
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
			return recording.ConvertFile(cmd.ErrOrStderr(), args[0], args[1])
		},
	}
}
