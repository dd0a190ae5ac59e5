// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// AddManCmd adds to root a hidden `genman DIR` command that writes one
// man page (section 1) per command into DIR from the commands' help
// (cobra/doc): NAME.1, NAME-SUBCOMMAND.1, ... The packages ship them
// (docs/packaging.md). The pages' date is SOURCE_DATE_EPOCH's when set,
// so that a package build is reproducible.
func AddManCmd(root *cobra.Command, manual string) {
	root.AddCommand(&cobra.Command{
		Use:    "genman DIR",
		Short:  "Write the man pages of every command into DIR",
		Hidden: true,
		Args:   ArgsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if fi, err := os.Stat(args[0]); err != nil || !fi.IsDir() {
				return Usagef("genman: %s is not a directory", args[0])
			}
			root.DisableAutoGenTag = true
			h := &doc.GenManHeader{Section: "1", Source: root.Name() + " " + root.Version, Manual: manual}
			if err := doc.GenManTree(root, h, args[0]); err != nil {
				return fmt.Errorf("genman: %w", err)
			}
			return nil
		},
	})
}
