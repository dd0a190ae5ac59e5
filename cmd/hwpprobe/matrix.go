// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"io"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/complete"
	"github.com/hwpprobe/hwpprobe/internal/files/iocheck"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
	"github.com/hwpprobe/hwpprobe/internal/reports/verdict"
)

func init() { subcommands = append(subcommands, newMatrixCmd, newProfilesCmd) }

func newMatrixCmd() *cobra.Command {
	var o profile.MatrixOptions
	var expect string
	var v verdictFlags
	cmd := &cobra.Command{
		Use:   "matrix PROFILE... [--format text|json|ktap] [-o [FORMAT=]FILE] [--expect FILE]",
		Short: "Apply each profile in turn and tabulate what the registers hold per core type",
		Long: `matrix applies each PROFILE in turn (each from the original settings, nothing
else runs), reads back per core type what the HWP/CPPC request register and EPB
hold (or the kernel's refusal), restores the settings, and prints the table.
With --expect FILE it compares the table with FILE and exits 1 on any
difference, printing it: for kernel CI, to catch an update that changes what
a governor or EPP string sends the hardware. --format ktap prints the
comparison as KTAP on stdout (a case per line; the table goes to stderr),
-o junit=FILE writes it as JUnit XML. See docs/matrix.md.`,
		Args:              cli.ArgsUsage(cobra.MinimumNArgs(1)),
		ValidArgsFunction: complete.Profiles(machineGovernors, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := v.out.Resolve(); err != nil {
				return err
			}
			inputs := append(profileFiles(args), expect)
			vout, err := v.open("matrix", "--expect", expect != "", inputs)
			if err != nil {
				return err
			}
			defer vout.Abort()
			files := iocheck.Set{Inputs: inputs, Outputs: v.out.IOCheck(), Streams: []iocheck.Stream{iocheck.Stdout(), iocheck.Stderr()}}
			if err := checkFiles("matrix", files); err != nil {
				return err
			}
			var want string
			if expect != "" {
				if want, err = profile.ReadMatrixFile(expect); err != nil {
					return cli.Usagef("--expect: %w", err)
				}
			}
			src, done := readSources()
			defer done()
			o.Options, o.Sources, o.Profiles = profile.Options{FS: src.FS}, src, args
			vs, err := profile.Matrix(o)
			if err != nil {
				return profileError(err)
			}
			var text bytes.Buffer
			profile.WriteMatrix(&text, vs)
			render := func(w io.Writer, f cli.Format) error {
				if f == cli.JSON {
					return cli.WriteJSON(w, vs)
				}
				_, err := w.Write(text.Bytes()) // the table, also under --format ktap (to stderr)
				return err
			}
			if err := render(v.report(cmd), v.out.Format); err != nil {
				return err
			}
			if err := v.out.WriteFiles(inputs, render, cli.JUnit); err != nil || expect == "" {
				return err
			}
			if v.on() {
				if err := v.write(cmd, vout, []*verdict.Case{profile.ExpectCases(text.String(), want, expect)}); err != nil {
					return err
				}
			}
			return profile.ExpectError(cmd.ErrOrStderr(), expect, profile.CompareMatrix(text.String(), want))
		},
	}
	cmd.Flags().StringVar(&expect, "expect", "", "compare the table with this file (the text output of an earlier run); exit 1 on a difference; --format ktap and -o junit=FILE write the comparison's verdicts")
	v.out = cli.AddOutputs(cmd.Flags(), cli.OutputSpec{Command: "matrix", Stdout: []cli.Format{cli.Text, cli.JSON, cli.KTAP}, Files: []cli.Format{cli.Text, cli.JSON, cli.JUnit}}, "")
	v.out.FormatAlias(cmd.Flags(), "json", cli.JSON)
	v.aliases(cmd.Flags())
	cmd.Flags().BoolVar(&o.IgnoreDaemons, "ignore-daemons", false, "run although a power daemon runs")
	return cmd
}

func newProfilesCmd() *cobra.Command {
	var out *cli.Outputs
	cmd := &cobra.Command{
		Use:   "profiles [--format text|json] [-o [FORMAT=]FILE]",
		Short: "List what profiles can name here: governors, EPP strings and their values, EPB, TuneD and ppd profiles",
		Long:  `profiles lists the machine's governors, its EPP strings with the register values the kernel writes for them on this model, the EPB names and values, the global settings, and the TuneD and power-profiles-daemon profiles installed. See docs/profiles.md.`,
		Args:  cli.ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.Resolve(); err != nil {
				return err
			}
			if err := checkFiles("profiles", iocheck.Set{Outputs: out.IOCheck()}); err != nil {
				return err
			}
			c, err := profile.ReadCatalog(sysfs.NewFS(global.root))
			if err != nil {
				return err
			}
			return out.Render(cmd.OutOrStdout(), nil, func(w io.Writer, f cli.Format) error {
				if f == cli.JSON {
					return cli.WriteJSON(w, c)
				}
				profile.WriteCatalog(w, c)
				return nil
			})
		},
	}
	out = cli.AddOutputs(cmd.Flags(), cli.OutputSpec{Command: "profiles", Stdout: textJSON, Files: textJSON}, "")
	out.FormatAlias(cmd.Flags(), "json", cli.JSON)
	return cmd
}
