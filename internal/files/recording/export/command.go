// SPDX-License-Identifier: Apache-2.0

package export

import (
	"io"

	"github.com/spf13/pflag"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/files/iocheck"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
)

// formats are the --format values, each with the function that writes a
// recording file in it.
var formats = map[cli.Format]func(io.Writer, string) (*recording.Recording, error){
	cli.CSV:     WriteCSVFile,
	cli.Parquet: WriteParquetFile,
}

// Command is `hwpprobe export`'s options (docs/export.md).
type Command struct {
	out *cli.Outputs
}

// AddFlags registers export's flags on f, filling c.
func (c *Command) AddFlags(f *pflag.FlagSet) {
	c.out = cli.AddOutputs(f, cli.OutputSpec{Command: "export", Stdout: []cli.Format{cli.CSV, cli.Parquet}, Single: true}, "")
	c.out.FormatAlias(f, "csv", cli.CSV)
}

// Run exports the recording at in (Run) to s.Out or the -o file, never
// Parquet to a terminal.
func (c *Command) Run(in string, s cli.Streams) error {
	if err := c.out.Resolve(); err != nil {
		return err
	}
	path := ""
	if len(c.out.Files) > 0 {
		path = c.out.Files[0].Path
	}
	if c.out.Format == cli.Parquet && path == "" && cli.IsTerminal(s.Out) {
		return cli.Usagef("export: Parquet is binary: not written to a terminal; use -o OUT.parquet or redirect standard output")
	}
	files := iocheck.Set{Inputs: []string{in}, Outputs: c.out.IOCheck(), Streams: []iocheck.Stream{iocheck.Stderr()}}
	if path == "" {
		files.Streams = append(files.Streams, iocheck.Stdout())
	}
	if err := cli.CheckFiles("export", files); err != nil {
		return err
	}
	return Run(s.Out, s.Err, in, path, formats[c.out.Format])
}
