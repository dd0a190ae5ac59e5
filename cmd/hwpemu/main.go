// SPDX-License-Identifier: Apache-2.0

// Command hwpemu serves an emulated machine (package emu) through FUSE so
// that unchanged programs — hwpprobe, turbostat, x86_energy_perf_policy,
// cat — read its /dev/cpu/N/msr, cpufreq, intel_pstate, powercap and
// /proc files at the usual paths.
//
//	hwpemu run MACHINE -- CMD [ARG...]   run CMD in a private mount namespace
//	hwpemu serve MACHINE DIR             mount the tree at DIR until a signal
//	hwpemu list                          list the built-in machines
//	hwpemu predict MACHINE PROFILE...    the model's steady state per profile
//
// It is test infrastructure and a way to try hwpprobe without the
// hardware; it says so on stderr every time. See docs/hwpemu.md.
package main

import (
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/buildinfo"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/complete"
	"github.com/hwpprobe/hwpprobe/internal/emu"
	"github.com/hwpprobe/hwpprobe/internal/emu/session"
)

// version is set at build time with -ldflags "-X main.version=..."; when
// it is not, `hwpemu version` says the module's (internal/buildinfo).
var version = buildinfo.Unset

// Exit statuses of hwpemu itself; `run` otherwise exits with CMD's status
// (128+N when CMD was killed by signal N), as a shell does.
const (
	exitError    = cli.ExitError
	exitUsage    = cli.ExitUsage
	exitNotFound = session.ExitNotFound // CMD not found
)

// The hidden commands `hwpemu run` executes again: the server and the
// grafter (internal/emu/session, docs/hwpemu.md).
const (
	nsCmdName    = session.NamespaceCmd
	graftCmdName = session.GraftCmd
)

// machineFlags select and tune the emulated machine.
type machineFlags struct {
	energyStart float64   // joules already counted by every RAPL domain
	busy        busyValue // fixed busy fractions of the CPUs; nil: follow the host
	timeScale   float64   // divides the model's time constants
	variant     string    // the model variant (emu.WithVariant)
	debug       bool      // log FUSE requests
}

// variantUsage is the --variant flag's help.
var variantUsage = "the model variant, a hypothesis about the hardware (docs/emulator.md): " + strings.Join(emu.Variants(), ", ") + " (default none)"

// Completion of a machine (a built-in name, or a description file) and
// of --variant.
var (
	completeMachines = complete.Words(emu.Names, "", true)
	completeVariants = complete.Words(emu.Variants, "", false)
)

// maxEnergyStart bounds --energy-start: far beyond any counter's wrap
// (2^32 units of 61 µJ are 262 kJ), and small enough that a float64 of
// joules still adds microjoules.
const maxEnergyStart = 1e9

func (f *machineFlags) register(cmd *cobra.Command) {
	cli.FloatVar(cmd.Flags(), &f.energyStart, "energy-start", 0, 0, maxEnergyStart,
		"joules every RAPL energy counter has counted at start, 0 to 1e9 (a value near the 32-bit wrap tests wrap handling)")
	busyFlag(cmd.Flags(), &f.busy,
		"make every emulated CPU this busy (0 to 1) instead of following the host CPUs' load (repeatable counters and energy); a comma-separated list gives CPU n the n-th fraction, repeated")
	cli.FloatVar(cmd.Flags(), &f.timeScale, "time-scale", 1, 0.001, 1e6,
		"divide the power limits' time windows (tau) by this, 0.001 to 1e6, so that tests see in seconds what takes minutes")
	cmd.Flags().StringVar(&f.variant, "variant", "", variantUsage)
	complete.Flag(cmd, "variant", completeVariants)
	cmd.Flags().BoolVar(&f.debug, "debug", false, "log every FUSE request to stderr")
}

// machine is the machine name with the flags' settings.
func (f *machineFlags) machine(name string) session.Machine {
	return session.Machine{Name: name, EnergyStart: f.energyStart, Busy: f.busy, TimeScale: f.timeScale, Variant: f.variant, Debug: f.debug}
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "hwpemu",
		Short: "Serve an emulated CPU power-management machine at the real paths",
		Long: `hwpemu emulates a machine's /dev/cpu/N/msr and cpuid devices, cpufreq,
intel_pstate / amd-pstate and powercap sysfs files, /proc/cpuinfo and
/proc/stat (registers from a machine description, counters that advance with
time, intel_pstate's rules on governor and EPP writes), and serves them through
FUSE: in a private mount namespace at the real paths (run) or at a directory
(serve). Nothing it shows is real hardware.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cli.ArgsUsage(cobra.NoArgs),
		RunE:          func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cli.UsageError{Err: err} })
	cli.AddVersion(root, buildinfo.Read(version))
	cli.AddManCmd(root, "hwpprobe manual")
	root.AddCommand(newRunCmd(), newNamespaceCmd(), newGraftCmd(), newServeCmd(), newListCmd(), newPredictCmd())
	return root
}

func newListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the built-in machines",
		Args:  cli.ArgsUsage(cobra.NoArgs),
		RunE:  func(cmd *cobra.Command, _ []string) error { return session.List(cmd.OutOrStdout()) },
	}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the CLI and returns the process exit status.
func run(args []string, stdout, stderr io.Writer) int {
	cmd := newRootCmd(stdout, stderr)
	cmd.SetArgs(args)
	return cli.Status(cmd.Execute(), "hwpemu", stderr)
}
