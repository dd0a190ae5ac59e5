// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/actions/workload/buildlike"
	"github.com/hwpprobe/hwpprobe/internal/cli"
)

func init() { subcommands = append(subcommands, newWorkloadCmd) }

// newWorkloadCmd is the built-in workload diff runs when given no CMD
// (docs/diff.md): `hwpprobe workload buildlike` runs the job, whose steps
// are `hwpprobe workload burn UNITS` processes.
func newWorkloadCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:    "workload",
		Short:  "Built-in workloads (diff runs them when given no command)",
		Hidden: true,
		Args:   cli.ArgsUsage(cobra.NoArgs),
		// Under hwpemu's closed loop the built-in workload is what is
		// held to the model, not an observer.
		Annotations: map[string]string{workloadAnnotation: "yes"},
	}
	cfg := buildlike.Config{}
	build := &cobra.Command{
		Use:   "buildlike [--seed S] [--size UNITS] [--jobs N]",
		Short: "A seeded, deterministic build-like parallel job (docs/diff.md)",
		Args:  cli.ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBuildlike(cmd, cfg)
		},
	}
	f := build.Flags()
	f.Uint64Var(&cfg.Seed, "seed", buildlike.DefaultSeed, "seed of the plan")
	cli.IntVarP(f, &cfg.Size, "size", "", buildlike.DefaultSize, 0, maxBuildlikeSize, "total work in units (one is about half a millisecond of one core)")
	cli.IntVarP(f, &cfg.Jobs, "jobs", "", defaultJobs(), 1, maxBuildlikeJobs, "job limit, like make -j")
	burn := &cobra.Command{
		Use:   "burn UNITS",
		Short: "One step of the build-like job: UNITS of compute work",
		Args:  cli.ArgsUsage(cobra.ExactArgs(1)),
		RunE: func(_ *cobra.Command, args []string) error {
			u, err := strconv.Atoi(args[0])
			if err != nil || u < 0 {
				return cli.Usagef("burn: %q is not a number of units", args[0])
			}
			buildlike.Burn(u)
			return nil
		},
	}
	cmd.AddCommand(build, burn)
	return cmd
}

// Bounds of the built-in workload's flags: 10^8 units are about 14 hours
// of one core; 4096 jobs, more CPUs than any machine here.
const (
	maxBuildlikeSize = 100_000_000
	maxBuildlikeJobs = 4096
)

func runBuildlike(cmd *cobra.Command, cfg buildlike.Config) error {
	plan, err := buildlike.NewPlan(cfg)
	if err != nil {
		return cli.UsageError{Err: err}
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("buildlike: find hwpprobe's binary: %w", err)
	}
	return buildlike.RunUntilStopped(cmd.Context(), plan, buildlike.ExecSpawn(cmd.ErrOrStderr(), exe, "workload", "burn"))
}

// defaultJobs is the job limit of the built-in workload: the online CPUs
// of the machine hwpprobe measures (buildlike.DefaultJobs).
func defaultJobs() int { return buildlike.DefaultJobs(global.root) }
