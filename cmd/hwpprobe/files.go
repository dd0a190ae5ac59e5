// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/files/iocheck"
)

// checkFiles refuses what iocheck.Check refuses, with one line naming the
// command: an output or standard stream that is one of the inputs (by
// device and inode, so also `>> INPUT` and `1<> INPUT`) or two outputs
// that are the same file, as usage errors (exit 2); an output that cannot
// be written, exit 1 as when creating it fails. Every command that reads
// or writes files calls it before it reads them or changes anything.
// When standard error is itself an input, the message would be written
// into that input: the exit status 2 is all it gets.
func checkFiles(command string, s iocheck.Set) error {
	err := iocheck.Check(s)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, iocheck.ErrUnwritable):
		return fmt.Errorf("%s: %w", command, err)
	case iocheck.Check(iocheck.Set{Inputs: s.Inputs, Streams: []iocheck.Stream{iocheck.Stderr()}}) != nil:
		return cli.ExitCodeError{Code: exitUsage}
	}
	return cli.UsageError{Err: fmt.Errorf("%s: %w", command, err)}
}

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
var textJSON = []cli.Format{cli.Text, cli.JSON}
