// SPDX-License-Identifier: Apache-2.0

package main

import (
	"math"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/complete"
	"github.com/hwpprobe/hwpprobe/internal/emu/session"
)

func newPredictCmd() *cobra.Command {
	var (
		variant string
		busy    int
	)
	cmd := &cobra.Command{
		Use:   "predict [flags] MACHINE PROFILE...",
		Short: "Print what the model alone says a CPU-bound workload gets under each profile",
		Long: `predict runs the emulated machine's model, with no FUSE and no workload, for
each PROFILE (as hwpprobe names them: performance, powersave:epp=0,
powersave:epp=performance, key=value,...): a fresh machine, the profile written
to its sysfs files under the kernel's rules, --busy-cpus CPUs busy all the time
(the first ones, all online CPUs by default) until the power limits and the
temperature have settled (after PL2's window, under PL1). It prints per profile
the mean delivered MHz of each core type, the package watts, PL1 and the
temperature at the end, and the work rate: the sum over the busy CPUs of their
delivered MHz, with its ratio to the first profile's.`,
		Example:           `  hwpemu predict --variant min-pins mtl-165u performance powersave:epp=0 powersave:epp=performance`,
		Args:              cli.ArgsUsage(cobra.MinimumNArgs(2)),
		ValidArgsFunction: complete.FirstThen(completeMachines, complete.Profiles(emulatedGovernors, false)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return session.Predict(session.PredictConfig{Machine: args[0], Variant: variant, Busy: busy, Profiles: args[1:],
				Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr()})
		},
	}
	cmd.Flags().StringVar(&variant, "variant", "", variantUsage)
	complete.Flag(cmd, "variant", completeVariants)
	cli.IntVarP(cmd.Flags(), &busy, "busy-cpus", "", 0, 0, math.MaxInt32,
		"how many CPUs are busy (the first online ones), 0 for every online CPU")
	return cmd
}

// emulatedGovernors are the governors the emulated machines offer
// (intel_pstate's and amd-pstate's), for predict's profile completion.
func emulatedGovernors() []string { return profile.DefaultGovernors }
