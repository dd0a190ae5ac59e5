// SPDX-License-Identifier: Apache-2.0

package main

import (
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/files/iocheck"
)

// checkFiles is cli.CheckFiles: outputs checked against inputs, refused
// with one line naming the command.
func checkFiles(command string, s iocheck.Set) error { return cli.CheckFiles(command, s) }

// profileFiles returns the files that @FILE profiles name.
func profileFiles(profiles []string) []string {
	var files []string
	for _, p := range profiles {
		if f, ok := strings.CutPrefix(p, "@"); ok {
			files = append(files, f)
		}
	}
	return files
}

// textJSON are the formats of a command that prints text or JSON.
var textJSON = cli.TextJSON
