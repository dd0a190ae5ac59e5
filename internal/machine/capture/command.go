// SPDX-License-Identifier: Apache-2.0

package capture

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/emu"
	"github.com/hwpprobe/hwpprobe/internal/files/atomicfile"
)

// Command is `hwpprobe capture`'s options (docs/capture.md).
type Command struct {
	Version            string // hwpprobe's, named in the description
	out, cpuSpec, name string
	force              bool
}

// AddFlags registers capture's flags on f, filling c.
func (c *Command) AddFlags(f *pflag.FlagSet) {
	f.StringVarP(&c.out, "output", "o", "", "write the description to FILE (through a temporary file, renamed when complete)")
	f.StringVarP(&c.cpuSpec, "cpus", "C", "", "CPUs whose per-CPU files, CPUID leaves and registers to read, e.g. 0-3 (default: every present CPU)")
	f.StringVar(&c.name, "name", "", "the machine's name in the description (default captured-HOST)")
	f.BoolVar(&c.force, "force", false, "replace FILE if it exists")
}

// Run captures the machine at root into the -o file, through a temporary
// file, never over one of the files it reads; what it could not read is
// named on s.Err, the file written on s.Out.
func (c *Command) Run(root string, s cli.Streams) error {
	if c.out == "" {
		return cli.Usagef("capture: -o FILE is required")
	}
	if err := checkOutput(c.out); err != nil {
		return err
	}
	if c.name != "" {
		if err := emu.CheckName(c.name); err != nil {
			return cli.Usagef("capture: --name %w", err)
		}
	}
	file, err := atomicfile.Create(c.out, atomicfile.Options{Replace: c.force})
	if errors.Is(err, atomicfile.ErrExists) {
		return fmt.Errorf("capture: %s exists (use --force to replace it)", c.out)
	}
	if err != nil {
		return fmt.Errorf("capture: cannot create %s: %w", c.out, err)
	}
	defer file.Abort()
	d, err := Capture(Options{Root: root, CPUs: c.cpuSpec, Tool: "hwpprobe capture " + c.Version})
	if errors.Is(err, ErrBadCPUList) {
		return cli.UsageError{Err: err}
	}
	if err != nil {
		return err
	}
	if err := atomicfile.CheckInputs(c.out, Inputs(root, d)); err != nil {
		return cli.Usagef("capture: -o %w", err)
	}
	if c.name != "" {
		d.Name = c.name
	}
	data, err := Marshal(d)
	if err != nil {
		return err
	}
	if _, err := file.Write(data); err != nil {
		return fmt.Errorf("capture: write %s: %w", c.out, err)
	}
	if err := file.Commit(); err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	reportUnreadable(s.Err, c.out, d.Unreadable)
	cli.Linef(s.Out, "hwpprobe", "captured %s (%d CPUs) into %s", d.Name, d.NumCPUs(), c.out)
	return nil
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
