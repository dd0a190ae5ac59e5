// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"io"

	"github.com/spf13/pflag"

	"github.com/hwpprobe/hwpprobe/internal/files/iocheck"
	"github.com/hwpprobe/hwpprobe/internal/reports/verdict"
)

// Verdicts are --format ktap and -o junit=FILE (--ktap, --junit) of the
// commands whose checks are verdicts besides their report (matrix
// --expect, diff --fail-if): the same KTAP and JUnit as conform's
// (internal/reports/verdict).
type Verdicts struct {
	Out  *Outputs
	JSON bool // the JSON file holds the verdicts (conform's)
}

// Aliases adds --ktap and --junit, the older spellings.
func (v Verdicts) Aliases(fs *pflag.FlagSet) {
	v.Out.FormatAlias(fs, "ktap", KTAP)
	v.Out.FileAlias(fs, "junit", JUnit)
}

// On reports whether a verdict is asked for.
func (v Verdicts) On() bool { return v.KTAP() || v.Out.File(JUnit) != "" }

// KTAP reports whether the verdicts go to stdout as KTAP.
func (v Verdicts) KTAP() bool { return v.Out.Format == KTAP }

// Open checks that the verdicts have their checks (checks: the flag
// what is given) and creates the JUnit file before anything changes (an
// unwritable path is a usage error); inputs are the files the command
// reads.
func (v Verdicts) Open(command, what string, checks bool, inputs []string) (*verdict.Files, error) {
	if v.On() && !checks {
		return nil, Usagef("%s: --ktap and --junit write the verdicts of %s; give it", command, what)
	}
	json := ""
	if v.JSON {
		json = v.Out.File(JSON)
	}
	out, err := verdict.OpenFiles("hwpprobe "+command, v.Out.File(JUnit), json, inputs)
	if err != nil {
		return nil, Usagef("%s: %w", command, err)
	}
	return out, nil
}

// OpenChecked opens the verdict files (Open, reading inputs), then
// checks s (CheckFiles) with the verdicts' outputs after s.Outputs and
// the standard streams as s.Streams: a verdict file that cannot be
// created is bad input (exit 2) before every output is checked against
// the inputs and each other. On an error no verdict file is left.
func (v Verdicts) OpenChecked(command, what string, checks bool, inputs []string, s iocheck.Set) (*verdict.Files, error) {
	out, err := v.Open(command, what, checks, inputs)
	if err != nil {
		return nil, err
	}
	s.Outputs = append(s.Outputs, v.Out.IOCheck()...)
	s.Streams = StdStreams()
	if err := CheckFiles(command, s); err != nil {
		out.Abort()
		return nil, err
	}
	return out, nil
}

// Report is where the command's report goes: stderr under --format ktap
// (stdout carries the KTAP), else stdout.
func (v Verdicts) Report(stdout, stderr io.Writer) io.Writer {
	if v.KTAP() {
		return stderr
	}
	return stdout
}

// Write prints the KTAP on stdout (under --format ktap) and writes the
// files.
func (v Verdicts) Write(stdout io.Writer, out *verdict.Files, cases []*verdict.Case) error {
	if v.KTAP() {
		if err := verdict.WriteKTAP(stdout, cases); err != nil {
			return err
		}
	}
	return out.Write(cases)
}
