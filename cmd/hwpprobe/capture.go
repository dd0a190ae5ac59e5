// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/emu"
	"github.com/hwpprobe/hwpprobe/internal/files/atomicfile"
	"github.com/hwpprobe/hwpprobe/internal/machine/capture"
)

func init() { subcommands = append(subcommands, newCaptureCmd) }

func newCaptureCmd() *cobra.Command {
	var (
		out, cpuSpec, name string
		force              bool
	)
	cmd := &cobra.Command{
		Use:   "capture -o FILE [-C cpus] [--force]",
		Short: "Read this machine once into an emulator description hwpemu serves",
		Long: `capture reads the machine once: /proc/cpuinfo, the CPU lists, topology and
cache sysfs, cpufreq / intel_pstate / amd_pstate / EPB / powercap sysfs, every
CPUID leaf and subleaf of every CPU (/dev/cpu/N/cpuid) and every register of
the catalog (/dev/cpu/N/msr, where the CPU has it), and writes an emulator
description: ` + "`hwpemu run FILE -- CMD`" + ` then serves it, so hwpprobe, turbostat or
x86_energy_perf_policy run on a copy of this machine. The file says where and
when it was captured; what could not be read (without root: the devices) is
listed in it under unreadable and named on stderr, never invented. Run it as
root. See docs/capture.md.`,
		Example: `  sudo hwpprobe capture -o machine.yaml
  sudo hwpemu run machine.yaml -- hwpprobe snapshot`,
		Args: cli.ArgsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return cli.Usagef("capture: -o FILE is required")
			}
			if err := checkOutput(out); err != nil {
				return err
			}
			if name != "" {
				if err := emu.CheckName(name); err != nil {
					return cli.Usagef("capture: --name %w", err)
				}
			}
			file, err := atomicfile.Create(out, atomicfile.Options{Replace: force})
			if errors.Is(err, atomicfile.ErrExists) {
				return fmt.Errorf("capture: %s exists (use --force to replace it)", out)
			}
			if err != nil {
				return fmt.Errorf("capture: cannot create %s: %w", out, err)
			}
			defer file.Abort()
			d, err := capture.Capture(capture.Options{Root: global.root, CPUs: cpuSpec, Tool: "hwpprobe capture " + version})
			if errors.Is(err, capture.ErrBadCPUList) {
				return cli.UsageError{Err: err}
			}
			if err != nil {
				return err
			}
			if err := atomicfile.CheckInputs(out, capture.Inputs(global.root, d)); err != nil {
				return cli.Usagef("capture: -o %w", err)
			}
			if name != "" {
				d.Name = name
			}
			data, err := capture.Marshal(d)
			if err != nil {
				return err
			}
			if _, err := file.Write(data); err != nil {
				return fmt.Errorf("capture: write %s: %w", out, err)
			}
			if err := file.Commit(); err != nil {
				return fmt.Errorf("capture: %w", err)
			}
			reportUnreadable(cmd.ErrOrStderr(), out, d.Unreadable)
			cli.Linef(cmd.OutOrStdout(), "hwpprobe", "captured %s (%d CPUs) into %s", d.Name, d.NumCPUs(), out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the description to FILE (through a temporary file, renamed when complete)")
	cmd.Flags().StringVarP(&cpuSpec, "cpus", "C", "", "CPUs whose per-CPU files, CPUID leaves and registers to read, e.g. 0-3 (default: every present CPU)")
	cmd.Flags().StringVar(&name, "name", "", "the machine's name in the description (default captured-HOST)")
	cmd.Flags().BoolVar(&force, "force", false, "replace FILE if it exists")
	return cmd
}

// checkOutput refuses a directory and any other file that is not a
// regular one (a description is a file hwpemu reads back).
func checkOutput(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return cli.Usagef("capture: %s is a directory", path)
	case err == nil && !fi.Mode().IsRegular():
		return cli.Usagef("capture: %s is not a regular file", path)
	}
	return nil
}

// reportUnreadable names, on one line, what the capture could not read.
func reportUnreadable(w io.Writer, out string, list []emu.Unreadable) {
	if len(list) == 0 {
		return
	}
	var parts []string
	for _, u := range list {
		parts = append(parts, u.Path+": "+u.Error)
	}
	cli.Linef(w, "hwpprobe", "capture: could not read %d item(s), listed under unreadable in %s: %s", len(list), out, strings.Join(parts, "; "))
}
