// SPDX-License-Identifier: Apache-2.0

package regs

import (
	"errors"
	"io"

	"github.com/spf13/pflag"

	"github.com/hwpprobe/hwpprobe/internal/cli"
)

// DecodeCommand is `hwpprobe decode`'s options (docs/decode.md).
type DecodeCommand struct {
	out  *cli.Outputs
	cpu  string
	list bool
}

// AddFlags registers decode's flags on f, filling c.
func (c *DecodeCommand) AddFlags(f *pflag.FlagSet) {
	c.out = cli.AddOutputs(f, cli.OutputSpec{Command: "decode", Stdout: cli.TextJSON, Files: cli.TextJSON}, "")
	c.out.FormatAlias(f, "json", cli.JSON)
	f.StringVar(&c.cpu, "cpu", "", "CPU `FAMILY:MODEL` for model-specific decodes, decimal or 0x-hex (e.g. 6:69 or 6:0x45)")
	f.BoolVar(&c.list, "list", false, "list the registers decode knows, with their aliases")
}

// CheckArgs checks decode's arguments: REG=VALUE..., or none with --list.
func (c *DecodeCommand) CheckArgs(args []string) error {
	if !c.list && len(args) == 0 {
		return errors.New("decode needs at least one REG=VALUE argument (or --list)")
	}
	if c.list && len(args) > 0 {
		return errors.New("--list takes no arguments")
	}
	return nil
}

// Run decodes args (or lists the registers with --list) to stdout or the
// -o files.
func (c *DecodeCommand) Run(args []string, stdout io.Writer) error {
	if err := c.out.Check(nil, nil); err != nil {
		return err
	}
	if c.list {
		return WriteList(stdout)
	}
	ds, err := DecodeArgs(args, c.cpu)
	if err != nil {
		return cli.UsageError{Err: err} // every error is the input's
	}
	return c.out.Render(stdout, nil, func(w io.Writer, format cli.Format) error {
		if format == cli.JSON {
			return WriteJSON(w, ds) // a JSON array, one element per argument
		}
		return WriteText(w, ds)
	})
}
