// SPDX-License-Identifier: Apache-2.0

package conform

import (
	"errors"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/files/iocheck"
	"github.com/hwpprobe/hwpprobe/internal/reports/verdict"
)

// Command is `hwpprobe conform`: its options and Run.
type Command struct {
	cfg      Config
	verdicts cli.Verdicts
}

// AddFlags registers conform's flags in fs.
func (c *Command) AddFlags(fs *pflag.FlagSet) {
	c.verdicts = cli.Verdicts{JSON: true,
		Out: cli.AddOutputs(fs, cli.OutputSpec{Command: "conform", Stdout: []cli.Format{cli.KTAP}, Files: []cli.Format{cli.JUnit, cli.JSON}}, "")}
	c.verdicts.Aliases(fs)
	c.verdicts.Out.FileAlias(fs, "json", cli.JSON)
	fs.BoolVar(&c.cfg.IgnoreDaemons, "ignore-daemons", false, "run although a power daemon runs")
}

// Run checks profiles (none: DefaultProfiles) on the system at root,
// prints the KTAP on stdout, writes the files and returns the kselftest
// exit status (0 pass, 1 fail, 4 skip).
func (c *Command) Run(root string, profiles []string, stdout io.Writer) error {
	v := c.verdicts
	if err := v.Out.Resolve(); err != nil {
		return err
	}
	// The verdict files first, as before the output model: one that
	// cannot be created is bad input (exit 2), then every output against
	// the inputs and each other.
	inputs := profile.Files(profiles)
	out, err := v.OpenChecked("conform", "", true, inputs, iocheck.Set{Inputs: inputs})
	if err != nil {
		return err
	}
	defer out.Abort()
	src, done := profile.OpenSources(root)
	defer done()
	cfg := c.cfg
	if cfg.Exe, err = os.Executable(); err != nil {
		return err
	}
	cfg.Profiles, cfg.Sources, cfg.Options = profiles, src, profile.Options{FS: src.FS}
	cases, err := Run(cfg)
	if err != nil {
		return profile.ExitError(err)
	}
	if err := v.Write(stdout, out, cases); err != nil {
		return err
	}
	if code := verdict.Exit(cases); code != verdict.ExitPass {
		return cli.ExitCodeError{Code: code, Err: errors.New("conform: " + verdict.Summary(cases))}
	}
	return nil
}
