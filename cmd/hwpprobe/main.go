// SPDX-License-Identifier: Apache-2.0

// Command hwpprobe shows what a CPU's power-management hardware is asked for
// and what it delivers under each Linux cpufreq setting.
//
// The CLI only wires packages together: sources (msr, perfcount, ebpf,
// sysfs) feed the sampler, recordings and reports; see docs/.
package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
	"github.com/hwpprobe/hwpprobe/internal/buildinfo"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/emu/emuloop"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
)

// version is set at build time with -ldflags "-X main.version=..."; init
// replaces it when unset with the module version of a `go install` build
// (internal/buildinfo). Reports and recordings carry it.
var version = buildinfo.Unset

// build is what this binary knows about its build (`version`, --version).
var build buildinfo.Info

func init() {
	build = buildinfo.Read(version)
	version = build.Version
}

// Exit statuses.
const (
	exitError = cli.ExitError // the command ran and failed
	exitUsage = cli.ExitUsage // bad input: flags, arguments, values
)

// globalFlags are shared by every subcommand.
type globalFlags struct {
	root string // system root for /sys, /proc, /dev (tests: a fixture tree)
}

var global globalFlags

// subcommands are registered by the files that implement them.
var subcommands []func() *cobra.Command

// machineGovernors are the governors the machine under --root offers, for
// profile completion.
func machineGovernors() []string { return profile.Governors(sysfs.NewFS(global.root)) }

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "hwpprobe",
		Short: "Show what the CPU's power-management hardware is asked for and delivers",
		Long: `hwpprobe reads Intel HWP / AMD CPPC requests, EPB, APERF/MPERF, RAPL energy and
thermal limits per CPU (snapshot, watch), traces what the kernel writes to
those registers (trace), and records all of it while a workload runs
(record, show, export). It never writes an MSR.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cli.ArgsUsage(cobra.NoArgs),
		RunE:          func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.PersistentFlags().StringVar(&global.root, "root", "/",
		"system root holding sys/, proc/ and dev/ (for fixture trees and tests)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cli.UsageError{Err: err} })
	cli.AddVersion(root, build)
	cli.AddManCmd(root, "hwpprobe manual")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error { return observe(cmd) }
	for _, f := range subcommands {
		root.AddCommand(f())
	}
	return root
}

func main() {
	os.Exit(run(os.Args[1:]))
}

// workloadAnnotation marks a command that is a workload, not an observer:
// under hwpemu's closed loop it stays in the loop's group.
const workloadAnnotation = "hwpprobe/workload"

// observe steps out of hwpemu's closed loop (internal/emu/emuloop): hwpprobe
// moves itself to the observer's group and the commands it starts run in
// the loop's group, held to the emulated machine's speed. The built-in
// workload's commands stay where they are.
func observe(cmd *cobra.Command) error {
	for c := cmd; c != nil; c = c.Parent() {
		if c.Annotations[workloadAnnotation] != "" {
			return nil
		}
	}
	return emuloop.StepOut(sysfs.NewFS(global.root), cmd.ErrOrStderr())
}

// run executes the CLI and returns the process exit status.
func run(args []string) int { return cli.Execute(newRootCmd(), args, "hwpprobe", os.Stderr) }
