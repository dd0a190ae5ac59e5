// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"errors"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpuid"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
	"github.com/hwpprobe/hwpprobe/msr"
)

// Command is `hwpprobe snapshot`'s options (docs/snapshot.md).
type Command struct {
	cpuSpec string
	out     *cli.Outputs
}

// AddFlags registers snapshot's flags on f, filling c.
func (c *Command) AddFlags(f *pflag.FlagSet) {
	cli.CPUListVar(f, &c.cpuSpec, "CPUs to show, e.g. 0-3,8 (default: every online CPU)")
	c.out = cli.AddOutputs(f, cli.OutputSpec{Command: "snapshot", Stdout: cli.TextJSON, Files: cli.TextJSON}, "")
	c.out.FormatAlias(f, "json", cli.JSON) // JSON: schema hwpprobe-snapshot/1, docs/schemas.md
}

// Run builds the snapshot of the machine at root and writes it to stdout
// or the -o files.
func (c *Command) Run(root string, stdout io.Writer) error {
	if err := c.out.Check(nil, cli.StdStreams()); err != nil {
		return err
	}
	dev := msr.Open(root)
	defer dev.Close()
	id := cpuid.Open(root)
	defer id.Close()
	s, err := Build(Sources{FS: sysfs.NewFS(root), MSR: dev, CPUID: id, EUID: os.Geteuid()}, c.cpuSpec)
	if errors.Is(err, ErrBadCPUList) {
		return cli.UsageError{Err: err}
	}
	if err != nil {
		return err
	}
	return c.out.Render(stdout, nil, func(w io.Writer, f cli.Format) error {
		if f == cli.JSON {
			return cli.WriteJSON(w, s)
		}
		return WriteText(w, s)
	})
}
