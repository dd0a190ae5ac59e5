// SPDX-License-Identifier: Apache-2.0

package profile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hwpprobe/hwpprobe/internal/actions/workload"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/files/iocheck"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpuid"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
	"github.com/hwpprobe/hwpprobe/internal/machine/snapshot"
	"github.com/hwpprobe/hwpprobe/internal/reports/verdict"
	"github.com/hwpprobe/hwpprobe/msr"
)

// The commands that apply profiles (apply, restore, matrix, profiles;
// docs/apply.md, docs/matrix.md, docs/profiles.md): their options and
// what they do between parsing the flags and the exit status, so that
// cmd/hwpprobe only wires.

// Files returns the files that @FILE profiles name.
func Files(profiles []string) []string {
	var files []string
	for _, p := range profiles {
		if f, ok := strings.CutPrefix(p, "@"); ok {
			files = append(files, f)
		}
	}
	return files
}

// OpenSources opens the read-only sources verification reads on the
// system at root; close them with the returned function.
func OpenSources(root string) (snapshot.Sources, func()) {
	dev, id := msr.Open(root), cpuid.Open(root)
	return snapshot.Sources{FS: sysfs.NewFS(root), MSR: dev, CPUID: id, EUID: os.Geteuid()},
		func() { dev.Close(); id.Close() }
}

// ExitError maps an error of Run, Matrix or conform to the exit status:
// bad input (exit 2) is a malformed profile, one the machine or the
// kernel refuses, a missing cpufreq, not root, a journal left by an
// earlier run, a daemon.
func ExitError(err error) error {
	for _, e := range []error{ErrSyntax, ErrRefused, ErrNoCPUFreq, ErrNotRoot, ErrJournalExists, ErrDaemon} {
		if errors.Is(err, e) {
			return cli.UsageError{Err: err}
		}
	}
	return err
}

// MatrixCommand is `hwpprobe matrix`: its options and Run.
type MatrixCommand struct {
	o        MatrixOptions
	expect   string
	verdicts cli.Verdicts
}

// AddFlags registers matrix's flags in fs.
func (c *MatrixCommand) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.expect, "expect", "", "compare the table with this file (the text output of an earlier run); exit 1 on a difference; --format ktap and -o junit=FILE write the comparison's verdicts")
	c.verdicts.Out = cli.AddOutputs(fs, cli.OutputSpec{Command: "matrix", Stdout: []cli.Format{cli.Text, cli.JSON, cli.KTAP}, Files: []cli.Format{cli.Text, cli.JSON, cli.JUnit}}, "")
	c.verdicts.Out.FormatAlias(fs, "json", cli.JSON)
	c.verdicts.Aliases(fs)
	fs.BoolVar(&c.o.IgnoreDaemons, "ignore-daemons", false, "run although a power daemon runs")
}

// Run tabulates profiles on the system at root (Matrix), prints the
// table (stderr under --format ktap), writes the -o files and, with
// --expect, compares the table and writes the comparison's verdicts.
func (c *MatrixCommand) Run(root string, profiles []string, stdout, stderr io.Writer) error {
	v := c.verdicts
	if err := v.Out.Resolve(); err != nil {
		return err
	}
	inputs := append(Files(profiles), c.expect)
	vout, err := v.OpenChecked("matrix", "--expect", c.expect != "", inputs, iocheck.Set{Inputs: inputs})
	if err != nil {
		return err
	}
	defer vout.Abort()
	var want string
	if c.expect != "" {
		if want, err = ReadMatrixFile(c.expect); err != nil {
			return cli.Usagef("--expect: %w", err)
		}
	}
	src, done := OpenSources(root)
	defer done()
	c.o.Options, c.o.Sources, c.o.Profiles = Options{FS: src.FS}, src, profiles
	vs, err := Matrix(c.o)
	if err != nil {
		return ExitError(err)
	}
	var text bytes.Buffer
	WriteMatrix(&text, vs)
	render := func(w io.Writer, f cli.Format) error {
		if f == cli.JSON {
			return cli.WriteJSON(w, vs)
		}
		_, err := w.Write(text.Bytes()) // the table, also under --format ktap (to stderr)
		return err
	}
	if err := render(v.Report(stdout, stderr), v.Out.Format); err != nil {
		return err
	}
	if err := v.Out.WriteFiles(inputs, render, cli.JUnit); err != nil || c.expect == "" {
		return err
	}
	if v.On() {
		if err := v.Write(stdout, vout, []*verdict.Case{ExpectCases(text.String(), want, c.expect)}); err != nil {
			return err
		}
	}
	return ExpectError(stderr, c.expect, CompareMatrix(text.String(), want))
}

// CatalogCommand is `hwpprobe profiles`: its outputs and Run.
type CatalogCommand struct{ out *cli.Outputs }

// AddFlags registers the flags of profiles in fs.
func (c *CatalogCommand) AddFlags(fs *pflag.FlagSet) {
	c.out = cli.AddOutputs(fs, cli.OutputSpec{Command: "profiles", Stdout: cli.TextJSON, Files: cli.TextJSON}, "")
	c.out.FormatAlias(fs, "json", cli.JSON)
}

// Run lists the profiles of the system at root (ReadCatalog).
func (c *CatalogCommand) Run(root string, stdout io.Writer) error {
	if err := c.out.Check(nil, nil); err != nil {
		return err
	}
	cat, err := ReadCatalog(sysfs.NewFS(root))
	if err != nil {
		return err
	}
	return c.out.Render(stdout, nil, func(w io.Writer, f cli.Format) error {
		if f == cli.JSON {
			return cli.WriteJSON(w, cat)
		}
		WriteCatalog(w, cat)
		return nil
	})
}

// ApplyCommand is `hwpprobe apply`: its options and Run.
type ApplyCommand struct{ o RunOptions }

// AddFlags registers apply's flags in fs.
func (c *ApplyCommand) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&c.o.DryRun, "dry-run", false, "print the writes and the journal, change nothing")
	fs.BoolVar(&c.o.IgnoreDaemons, "ignore-daemons", false, "apply although tuned, power-profiles-daemon, thermald, tlp, auto-cpufreq or system76-power runs")
}

// Run applies args[0] on the system at root (Run) and runs the command
// after dash (cobra's ArgsLenAtDash) under it; the report goes to out,
// the command's status is the exit status.
func (c *ApplyCommand) Run(root string, args []string, dash int, out io.Writer) error {
	o := c.o
	if (dash < 0 && len(args) != 1) || dash > 1 {
		return cli.Usagef("apply: want one PROFILE, then -- CMD")
	}
	o.Profile = args[0]
	if err := cli.CheckFiles("apply", iocheck.Set{Inputs: Files(args[:1]), Streams: cli.StdStreams()}); err != nil {
		return err
	}
	if dash == 1 {
		if o.Command = args[1:]; len(o.Command) == 0 {
			return cli.Usagef("apply: no CMD after --")
		}
	}
	cred, err := workload.SudoCredential(os.Getenv)
	if err != nil {
		return cli.UsageError{Err: err}
	}
	src, done := OpenSources(root)
	defer done()
	o.Options, o.Sources, o.Cred = Options{FS: src.FS}, src, cred
	o.Out, o.Stdin, o.Stdout, o.Stderr = out, os.Stdin, os.Stdout, os.Stderr
	code, err := Run(o)
	if err != nil {
		return ExitError(err)
	}
	if code != 0 {
		return cli.ExitCodeError{Code: code}
	}
	return nil
}

// RestoreCommand is `hwpprobe restore` on the system at root: as root,
// Restore and its report on out.
func RestoreCommand(root string, out io.Writer) error {
	if os.Geteuid() != 0 {
		return cli.Usagef("restore: %v: restore writes sysfs settings; run it as root", ErrNotRoot)
	}
	res, err := Restore(Options{FS: sysfs.NewFS(root)})
	WriteRestore(out, res)
	return err
}
