// Command hwpprobe shows what a CPU's power-management hardware is asked for
// and what it delivers under each Linux cpufreq setting.
//
// The CLI only wires packages together: sources (msr, perfcount, ebpf,
// sysfs) feed the sampler, recordings and reports; see docs/.
package main

import (
	"context"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/sigquit"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// Exit statuses.
const (
	exitOK    = cli.ExitOK
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

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "hwpprobe",
		Short: "Show what the CPU's power-management hardware is asked for and delivers",
		Long: `hwpprobe reads Intel HWP / AMD CPPC requests, EPB, APERF/MPERF, RAPL energy and
thermal limits per CPU (snapshot, watch), traces what the kernel writes to
those registers (trace), and records all of it while a workload runs
(record, show, export). It never writes an MSR.`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cli.ArgsUsage(cobra.NoArgs),
		RunE:          func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.PersistentFlags().StringVar(&global.root, "root", "/",
		"system root holding sys/, proc/ and dev/ (for fixture trees and tests)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cli.UsageError{Err: err} })
	for _, f := range subcommands {
		root.AddCommand(f())
	}
	return root
}

func main() {
	os.Exit(run(os.Args[1:]))
}

// run executes the CLI and returns the process exit status.
func run(args []string) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := newRootCmd()
	release := func() {}
	defer func() { release() }()
	cmd.PersistentPreRun = func(c *cobra.Command, _ []string) {
		if catchesQuit[c.CommandPath()] {
			release = sigquit.Hold(cancel)
		}
	}
	cmd.SetArgs(args)
	return cli.Status(cmd.ExecuteContext(ctx), "hwpprobe", os.Stderr, isCobraUsage)
}

// catchesQuit are the commands that catch SIGQUIT themselves, as Ctrl-C
// (watch, trace, exporter: they end cleanly, exit 0) or to stop and
// restore (record, apply, matrix, diff: the command's status). From their
// start, package sigquit leaves SIGQUIT to them, and cancels their
// context (one that comes before their signal.Notify stops those that
// follow the context). Every other command ends at once with status
// 131 (sigquit.Status), as the signal's default action would, never with
// the Go runtime's stack dump and status 2. A command that starts to catch
// SIGQUIT must be listed here, or a SIGQUIT would end it before it has
// restored anything; TestQuitClassified lists every command.
var catchesQuit = map[string]bool{
	"hwpprobe watch": true, "hwpprobe trace": true, "hwpprobe exporter": true, "hwpprobe record": true,
	"hwpprobe apply": true, "hwpprobe matrix": true, "hwpprobe diff": true,
}

// isCobraUsage recognises cobra's own errors for unknown commands and
// flags, which it does not type.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires at least", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
