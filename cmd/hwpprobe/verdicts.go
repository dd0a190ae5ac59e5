// SPDX-License-Identifier: Apache-2.0

package main

import (
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/files/iocheck"
	"github.com/hwpprobe/hwpprobe/internal/reports/verdict"
)

// verdictFlags are --ktap and --junit of the commands whose checks are
// verdicts besides their report (matrix --expect, diff --fail-if): the
// same KTAP and JUnit as conform's (internal/verdict).
type verdictFlags struct {
	ktap  bool
	junit string
}

// add adds --ktap and --junit; what names the checks ("--expect").
func (v *verdictFlags) add(f *pflag.FlagSet, what string) {
	f.BoolVar(&v.ktap, "ktap", false, "print "+what+"'s verdicts as KTAP on stdout (the report goes to stderr)")
	f.StringVar(&v.junit, "junit", "", "also write "+what+"'s verdicts as JUnit XML to FILE")
}

// on reports whether a verdict is asked for.
func (v *verdictFlags) on() bool { return v.ktap || v.junit != "" }

// output is --junit for iocheck.
func (v *verdictFlags) output() iocheck.Output { return iocheck.Output{Name: "--junit", Path: v.junit} }

// open checks that the verdicts have their checks (checks: the flag is
// given) and creates --junit's file before anything changes (an
// unwritable path is a usage error); inputs are the files the command
// reads.
func (v *verdictFlags) open(command, what string, checks bool, inputs []string) (*verdict.Files, error) {
	if v.on() && !checks {
		return nil, cli.Usagef("%s: --ktap and --junit write the verdicts of %s; give it", command, what)
	}
	out, err := verdict.OpenFiles("hwpprobe "+command, v.junit, "", inputs)
	if err != nil {
		return nil, cli.Usagef("%s: %w", command, err)
	}
	return out, nil
}

// report is where the command's report goes: stderr under --ktap (stdout
// carries the KTAP), else stdout.
func (v *verdictFlags) report(cmd *cobra.Command) io.Writer {
	if v.ktap {
		return cmd.ErrOrStderr()
	}
	return cmd.OutOrStdout()
}

// write prints the KTAP on stdout (under --ktap) and writes the files.
func (v *verdictFlags) write(cmd *cobra.Command, out *verdict.Files, cases []*verdict.Case) error {
	if v.ktap {
		if err := verdict.WriteKTAP(cmd.OutOrStdout(), cases); err != nil {
			return err
		}
	}
	return out.Write(cases)
}
