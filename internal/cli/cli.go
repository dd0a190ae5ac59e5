// SPDX-License-Identifier: Apache-2.0

// Package cli holds what the hwpprobe and hwpemu commands share: errors
// that choose the exit status, and turning a command's error into a
// message and that status.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit statuses both commands use.
const (
	ExitOK    = 0
	ExitError = 1 // the command ran and failed
	ExitUsage = 2 // bad input: flags, arguments, values
)

// UsageError marks an error caused by the user's input; it exits with
// status ExitUsage.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the error the user's input caused.
func (e UsageError) Unwrap() error { return e.Err }

// Usagef returns a UsageError with a formatted message.
func Usagef(format string, a ...any) error { return UsageError{fmt.Errorf(format, a...)} }

// ExitCodeError carries an exit status chosen by a subcommand (for
// example the status of a workload) after its message, if any (Err may be
// nil), is printed.
type ExitCodeError struct {
	Code int
	Err  error
}

func (e ExitCodeError) Error() string {
	if e.Err == nil {
		return ""
	}
	return e.Err.Error()
}

// Unwrap returns the error to print, or nil.
func (e ExitCodeError) Unwrap() error { return e.Err }

// Status returns the exit status for err, what a command's Execute
// returned, after printing err to stderr as one line, "prog: err" with
// err's text through OneLine (user input in it cannot split the line or
// reach the terminal as control sequences): ExitOK for nil,
// an ExitCodeError's Code (printing its Err only when there is one),
// ExitUsage for a UsageError or an error isUsage recognises, ExitError
// otherwise.
func Status(err error, prog string, stderr io.Writer) int {
	if err == nil {
		return ExitOK
	}
	var ec ExitCodeError
	if errors.As(err, &ec) {
		if ec.Err != nil {
			fmt.Fprintln(stderr, prog+":", OneLine(ec.Err.Error()))
		}
		return ec.Code
	}
	fmt.Fprintln(stderr, prog+":", OneLine(err.Error()))
	var ue UsageError
	if errors.As(err, &ue) || cobraUsage(err) {
		return ExitUsage
	}
	return ExitError
}

// Execute runs cmd with args and returns the process's exit status
// (Status, with the error printed as prog's on stderr).
func Execute(cmd *cobra.Command, args []string, prog string, stderr io.Writer) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd.SetArgs(args)
	return Status(cmd.ExecuteContext(ctx), prog, stderr)
}

// StopSignals end a command as Ctrl-C does: SIGINT, SIGTERM, SIGHUP (the
// terminal went away) and SIGQUIT (Ctrl-\, which would otherwise dump
// every goroutine's stack). An unbounded command (watch, trace) stops;
// one that changed settings (apply, matrix, conform, diff) restores them
// first.
var StopSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// cobraUsage recognises cobra's own errors, which it does not type: an
// unknown command, flag or shorthand, a flag without its argument or
// with a bad one, and the argument-count validators' words (for a command
// whose validator is not wrapped in ArgsUsage). One rule for both
// binaries.
func cobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "flag needs an argument", "invalid argument", "accepts ", "requires at least"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// ArgsUsage makes a cobra argument validator's errors usage errors.
func ArgsUsage(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := v(cmd, args); err != nil {
			return UsageError{Err: err}
		}
		return nil
	}
}
