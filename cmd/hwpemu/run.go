// SPDX-License-Identifier: Apache-2.0

package main

import (
	"math"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/complete"
	"github.com/hwpprobe/hwpprobe/internal/emu/session"
)

func newRunCmd() *cobra.Command {
	var (
		mf                   machineFlags
		openLoop, closedLoop bool
	)
	cmd := &cobra.Command{
		Use:   "run [flags] MACHINE [--] CMD [ARG...]",
		Short: "Run CMD where the emulated machine's files are at the real paths",
		Long: `run starts CMD in a private mount and PID namespace in which /dev/cpu,
/sys/devices/system/cpu, /sys/devices/cpu_core, /sys/devices/cpu_atom,
/sys/class/powercap, /proc/cpuinfo and /proc/stat are the emulated machine's,
so unchanged programs read them. Nothing outside the namespaces changes. hwpemu
serves the files while CMD runs and exits with CMD's status (128+N when CMD
was killed by signal N); SIGINT, SIGTERM, SIGHUP and SIGQUIT are passed on to
CMD. Every process CMD starts ends with it. CMD runs in a cgroup whose CPU
bandwidth follows the emulated CPUs' delivered frequencies every 100 ms, so
that work takes longer where the model delivers less (the closed loop; hwpprobe
under it observes from hwpemu run's own group and holds only its workloads to
the model); with --open-loop, with --busy, and on a machine without a cpufreq
driver CMD runs at the host's speed. Needs root (CAP_SYS_ADMIN).`,
		Example: `  sudo hwpemu run mtl-165u -- hwpprobe snapshot
  sudo hwpemu run zen4-amd-pstate -- sh -c 'echo performance > /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor'`,
		Args:              cli.ArgsUsage(cobra.MinimumNArgs(2)),
		ValidArgsFunction: complete.FirstThen(completeMachines, nil),
		RunE: func(cmd *cobra.Command, args []string) error {
			args = dropDash(args)
			if len(args) < 2 {
				return cli.Usagef("run needs a machine and a command")
			}
			return session.Run(session.RunConfig{Machine: mf.machine(args[0]), OpenLoop: openLoop, Command: args[1:], Stderr: cmd.ErrOrStderr()})
		},
	}
	cmd.Flags().SetInterspersed(false)
	mf.register(cmd)
	cmd.Flags().BoolVar(&openLoop, "open-loop", false,
		"let CMD run at the host's speed, the emulated CPUs following the host's load, instead of holding its CPU time to the emulated CPUs' delivered frequencies (the closed loop, the default; docs/emulator.md)")
	cmd.Flags().BoolVar(&closedLoop, "closed-loop", false, "the closed loop, the default: accepted and ignored (--open-loop wins)")
	return cmd
}

// dropDash removes a "--" between MACHINE and CMD, which flag parsing
// leaves in place once it has stopped at MACHINE.
func dropDash(args []string) []string {
	if len(args) > 1 && args[1] == "--" {
		return append([]string{args[0]}, args[2:]...)
	}
	return args
}

// newNamespaceCmd is the server `hwpemu run` executes in its new
// namespaces (session.ServeNamespace); it reads the flags session.Run
// gives it.
func newNamespaceCmd() *cobra.Command {
	var (
		mf machineFlags
		ns session.NamespaceConfig
	)
	cmd := &cobra.Command{
		Use:    nsCmdName + " MACHINE CMD [ARG...]",
		Hidden: true,
		Args:   cli.ArgsUsage(cobra.MinimumNArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns.Machine, ns.Command = mf.machine(args[0]), args[1:]
			return session.ServeNamespace(ns)
		},
	}
	cmd.Flags().SetInterspersed(false)
	cmd.Flags().StringVar(&ns.Parent, "parent-mntns", "", "mount namespace of `hwpemu run`")
	cli.IntVarP(cmd.Flags(), &ns.RunPID, "run-pid", "", 0, 1, math.MaxInt32, "PID of `hwpemu run`")
	cmd.Flags().StringVar(&ns.Cgroup, "cgroup", "", "the closed loop's cgroup, made by `hwpemu run`")
	cmd.Flags().StringVar(&ns.Observer, "observer-cgroup", "", "the observers' cgroup: the one `hwpemu run` is in")
	cmd.Flags().StringVar(&ns.OpenReason, "open-reason", "", "why CMD runs open loop")
	mf.register(cmd)
	return cmd
}

// newGraftCmd is the grafter the server executes (session.Graft).
func newGraftCmd() *cobra.Command {
	var g session.GraftConfig
	cmd := &cobra.Command{
		Use:    graftCmdName + " CMD [ARG...]",
		Hidden: true,
		Args:   cli.ArgsUsage(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			g.Command, g.Stderr = args, cmd.ErrOrStderr()
			return session.Graft(g)
		},
	}
	cmd.Flags().SetInterspersed(false)
	cmd.Flags().StringVar(&g.Parent, "parent-mntns", "", "mount namespace of `hwpemu run`")
	cmd.Flags().StringVar(&g.Machine, "machine", "", "name of the emulated machine")
	cmd.Flags().StringVar(&g.Model, "model", "", "the model's one-line summary, printed after the banner")
	cmd.Flags().StringVar(&g.Loop, "loop", "", "the line about the closed or open loop, printed after the model's")
	cmd.Flags().StringVar(&g.Cgroup, "cgroup", "", "the closed loop's cgroup, which CMD runs in")
	cmd.Flags().StringVar(&g.Variant, "variant", "", "the model variant's one-line summary, printed after the model's")
	return cmd
}
