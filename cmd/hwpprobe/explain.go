// SPDX-License-Identifier: Apache-2.0

package main

import (
	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/actions/experiment"
	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/complete"
)

func init() { subcommands = append(subcommands, newExplainCmd) }

func newExplainCmd() *cobra.Command {
	o := &diffOptions{name: "explain"}
	cmd := &cobra.Command{
		Use:   "explain A B [-- CMD] | explain EXPERIMENT",
		Short: "Which field of the request register (min, max, EPP, EPB ...) makes B faster or slower than A",
		Long: `explain A B reads what profiles A and B leave in the HWP/CPPC request
register and EPB on this machine (each applied in turn and restored, as matrix
does), derives a chain of profiles from A to B in which each step changes one
field through the kernel's own knobs (first a register twin of A on B's
settings), with two changed fields also the fourth corner of the 2x2 design,
runs the chain as one N-side experiment (as diff does: interleaved, restored,
every run's settings checked) and attributes the change of time and energy
from A to B to the steps: each field causes a difference, is shown not to
(equivalent within --precision), or is undecided; the interaction too.
--dry-run prints the chain with each step's registers per core type and runs
nothing. explain EXPERIMENT attributes again from the saved file. Exit status
as diff's. See docs/explain.md.`,
		Args:              cli.ArgsUsage(cobra.MinimumNArgs(1)),
		ValidArgsFunction: complete.Profiles(machineGovernors, true),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExplain(cmd, o, args)
		},
	}
	f := cmd.Flags()
	addExperimentFlags(f, o, []cli.Format{cli.Text}, []cli.Format{cli.Markdown, cli.JSON, cli.HTML})
	f.StringVar(&o.runs, "runs", "5", "measured runs per side")
	cli.FloatVar(f, &o.precision, "precision", analysis.DefaultExplainPrecision, 1e-6, 0.99, "a step whose ratio interval lies within ±precision is equivalent (no effect)")
	return cmd
}

func runExplain(cmd *cobra.Command, o *diffOptions, args []string) error {
	d, err := reportOptions(o)
	if err != nil {
		return err
	}
	d.Explain, d.Precision = true, o.precision
	dash := cmd.ArgsLenAtDash()
	if dash < 0 && allFiles(args) {
		if len(args) != 1 {
			return cli.Usagef("explain: give one experiment of explain, not %d files", len(args))
		}
		return analyseFiles(cmd, o, args, d)
	}
	sides := args
	if dash >= 0 {
		sides = args[:dash]
	}
	if len(sides) != 2 {
		return cli.Usagef("explain: want two profiles A B (or an experiment to analyse), got %d: %q", len(sides), sides)
	}
	if o.runs == "auto" {
		return cli.Usagef("explain: --runs auto compares two sides; give --runs N")
	}
	cfg, err := experimentConfig(cmd, o, args)
	if err != nil {
		return err
	}
	return runConfigured(cmd, o, cfg, d, func(cfg *experiment.Config) (bool, error) {
		return experiment.PrepareExplain(cfg, cmd.OutOrStdout())
	})
}
