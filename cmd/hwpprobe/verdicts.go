// SPDX-License-Identifier: Apache-2.0

package main

import (
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/reports/verdict"
)

// verdictFlags are --format ktap and -o junit=FILE (--ktap, --junit) of
// the commands whose checks are verdicts besides their report (matrix
// --expect, diff --fail-if): the same KTAP and JUnit as conform's
// (internal/verdict).
type verdictFlags struct {
	out  *cli.Outputs
	json bool // the JSON file holds the verdicts (conform's)
}

// aliases adds --ktap and --junit, the older spellings.
func (v verdictFlags) aliases(fs *pflag.FlagSet) {
	v.out.FormatAlias(fs, "ktap", cli.KTAP)
	v.out.FileAlias(fs, "junit", cli.JUnit)
}

// on reports whether a verdict is asked for.
func (v verdictFlags) on() bool { return v.ktap() || v.out.File(cli.JUnit) != "" }

// ktap reports whether the verdicts go to stdout as KTAP.
func (v verdictFlags) ktap() bool { return v.out.Format == cli.KTAP }

// open checks that the verdicts have their checks (checks: the flag is
// given) and creates the JUnit file before anything changes (an
// unwritable path is a usage error); inputs are the files the command
// reads.
func (v verdictFlags) open(command, what string, checks bool, inputs []string) (*verdict.Files, error) {
	if v.on() && !checks {
		return nil, cli.Usagef("%s: --ktap and --junit write the verdicts of %s; give it", command, what)
	}
	json := ""
	if v.json {
		json = v.out.File(cli.JSON)
	}
	out, err := verdict.OpenFiles("hwpprobe "+command, v.out.File(cli.JUnit), json, inputs)
	if err != nil {
		return nil, cli.Usagef("%s: %w", command, err)
	}
	return out, nil
}

// report is where the command's report goes: stderr under --format ktap
// (stdout carries the KTAP), else stdout.
func (v verdictFlags) report(cmd *cobra.Command) io.Writer {
	if v.ktap() {
		return cmd.ErrOrStderr()
	}
	return cmd.OutOrStdout()
}

// write prints the KTAP on stdout (under --format ktap) and writes the
// files.
func (v verdictFlags) write(cmd *cobra.Command, out *verdict.Files, cases []*verdict.Case) error {
	if v.ktap() {
		if err := verdict.WriteKTAP(cmd.OutOrStdout(), cases); err != nil {
			return err
		}
	}
	return out.Write(cases)
}
