// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/buildinfo"
)

// AddVersion makes root's --version flag and a `version` subcommand both
// print in's report (buildinfo.Info.String under root's name).
func AddVersion(root *cobra.Command, in buildinfo.Info) {
	report := in.String(root.Name())
	root.Version = in.Version
	root.SetVersionTemplate(report)
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the version, module, VCS revision and time, and Go version of this binary",
		Args:  ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := io.WriteString(cmd.OutOrStdout(), report)
			return err
		},
	})
}
