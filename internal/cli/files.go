// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/files/iocheck"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
)

// TextJSON are the formats of a command that prints text or JSON.
var TextJSON = []Format{Text, JSON}

// Streams are a command's standard streams.
type Streams struct {
	In       io.Reader
	Out, Err io.Writer
}

// StreamsOf returns cmd's standard streams (the process's unless a test
// set others).
func StreamsOf(cmd *cobra.Command) Streams {
	return Streams{In: cmd.InOrStdin(), Out: cmd.OutOrStdout(), Err: cmd.ErrOrStderr()}
}

// CheckFiles refuses what iocheck.Check refuses, with one line naming the
// command: an output or standard stream that is one of the inputs (by
// device and inode, so also `>> INPUT` and `1<> INPUT`) or two outputs
// that are the same file, as usage errors (exit 2); an output that cannot
// be written, exit 1 as when creating it fails. Every command that reads
// or writes files calls it before it reads them or changes anything.
// When standard error is itself an input, the message would be written
// into that input: the exit status 2 is all it gets.
func CheckFiles(command string, s iocheck.Set) error {
	err := iocheck.Check(s)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, iocheck.ErrUnwritable):
		return fmt.Errorf("%s: %w", command, err)
	case iocheck.Check(iocheck.Set{Inputs: s.Inputs, Streams: []iocheck.Stream{iocheck.Stderr()}}) != nil:
		return ExitCodeError{Code: ExitUsage}
	}
	return UsageError{Err: fmt.Errorf("%s: %w", command, err)}
}

// SelectCPUs resolves a -C argument against the CPUs of the system at
// root: every online CPU when spec is empty; a CPU that is absent or
// offline is a usage error.
func SelectCPUs(root, spec string) (cpus.List, error) {
	online, err := sysfs.NewFS(root).OnlineCPUs()
	if err != nil {
		return nil, fmt.Errorf("online CPUs: %w", err)
	}
	present, _ := sysfs.NewFS(root).PresentCPUs()
	list, err := cpus.Select(spec, online, present)
	if err != nil {
		return nil, UsageError{Err: err}
	}
	return list, nil
}

// StdStreams are what a command writes besides its files: its output on
// standard output, messages on standard error (iocheck.Set's Streams).
func StdStreams() []iocheck.Stream { return []iocheck.Stream{iocheck.Stdout(), iocheck.Stderr()} }
