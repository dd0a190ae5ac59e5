// SPDX-License-Identifier: Apache-2.0

package main

import (
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
			return buildlike.RunSelf(cmd.Context(), cfg, cmd.ErrOrStderr())
		},
	}
	// The default job limit: the online CPUs of the machine hwpprobe
	// measures.
	cfg.AddFlags(build.Flags(), buildlike.DefaultJobs(global.root))
	burn := &cobra.Command{
		Use:   "burn UNITS",
		Short: "One step of the build-like job: UNITS of compute work",
		Args:  cli.ArgsUsage(cobra.ExactArgs(1)),
		RunE:  func(_ *cobra.Command, args []string) error { return buildlike.BurnArg(args[0]) },
	}
	cmd.AddCommand(build, burn)
	return cmd
}
