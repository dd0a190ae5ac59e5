// SPDX-License-Identifier: Apache-2.0

package report

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/files/iocheck"
	"github.com/hwpprobe/hwpprobe/internal/reports/report/png"
)

// PageCommand is `hwpprobe report`'s options (docs/report.md).
type PageCommand struct {
	PageOptions
}

// AddFlags registers report's flags on f, filling c.
func (c *PageCommand) AddFlags(f *pflag.FlagSet) {
	f.StringVarP(&c.Output, "output", "o", "", "the HTML file to write (replaced whole)")
	f.StringVar(&c.PNG, "png", "", "also write the main charts as PNG files into DIR")
	f.BoolVar(&c.PerCPU, "per-cpu", false, "add a chart of every CPU's delivered frequency (larger page)")
	cli.FloatVar(f, &c.Stats.Alpha, "alpha", analysis.DefaultAlpha, 0, 1, "significance level of the U test, in (0, 1)")
	cli.FloatVar(f, &c.Stats.Confidence, "confidence", analysis.DefaultConfidence, 0, 1, "level of the intervals, in (0, 1)")
	f.BoolVar(&c.KeepDisturbed, "keep-disturbed", false, "count runs whose settings another writer changed")
}

// pngFiles are the files report --png writes into its directory.
var pngFiles = []string{png.FileMHz, png.FileBusy, png.FilePower, png.FileTemperature, png.FileRunTimes}

// Run writes the page of the recordings at paths (Page); input that
// cannot be used is a cli.UsageError.
func (c *PageCommand) Run(paths []string) error {
	if c.Output == "" {
		return cli.Usagef("report: -o REPORT.html is required")
	}
	if a, cf := c.Stats.Alpha, c.Stats.Confidence; a <= 0 || a >= 1 || cf <= 0 || cf >= 1 {
		return cli.Usagef("report: --alpha and --confidence must be in (0, 1)")
	}
	c.Paths = paths
	files := iocheck.Set{Inputs: paths, Outputs: []iocheck.Output{{Name: "-o", Path: c.Output}}, Streams: []iocheck.Stream{iocheck.Stderr()}}
	if c.PNG != "" {
		for _, name := range pngFiles {
			files.Outputs = append(files.Outputs, iocheck.Output{Name: "--png", Path: filepath.Join(c.PNG, name), MakeDirs: true})
		}
	}
	if err := cli.CheckFiles("report", files); err != nil {
		return err
	}
	// Page's other errors already begin with "report:".
	err := Page(c.PageOptions)
	var in InputError
	if errors.As(err, &in) {
		return cli.UsageError{Err: fmt.Errorf("report: %w", in.Err)}
	}
	return err
}

// StatCommand is `hwpprobe stat`'s options (docs/stat.md).
type StatCommand struct {
	Version           string // hwpprobe's, in the JSON
	out               *cli.Outputs
	reference         string
	alpha, confidence float64
}

// AddFlags registers stat's flags on fs, filling c.
func (c *StatCommand) AddFlags(fs *pflag.FlagSet) {
	c.out = cli.AddOutputs(fs, cli.OutputSpec{Command: "stat", Stdout: cli.TextJSON, Files: cli.TextJSON}, "")
	c.out.FormatAlias(fs, "json", cli.JSON)
	fs.StringVar(&c.reference, "reference", "", "the `FILE` the others are compared with (one of the files; default the first)")
	cli.FloatVar(fs, &c.alpha, "alpha", analysis.DefaultAlpha, 0, 1, "significance level of the U test (family-wise with more than two files), in (0, 1)")
	cli.FloatVar(fs, &c.confidence, "confidence", analysis.DefaultConfidence, 0, 1, "level of the intervals (simultaneous for the ratios), in (0, 1)")
}

// CheckStatArgs checks stat's number of files.
func CheckStatArgs(args []string) error {
	if len(args) < StatMinFiles || len(args) > StatMaxFiles {
		return fmt.Errorf("stat compares %d to %d files, got %d", StatMinFiles, StatMaxFiles, len(args))
	}
	return nil
}

// Run compares the per-run numbers of the files at args and writes the
// comparison to stdout or the -o files; every error of the input's is a
// cli.UsageError.
func (c *StatCommand) Run(args []string, stdout io.Writer) error {
	if err := c.out.Check(args, cli.StdStreams()); err != nil {
		return err
	}
	in, err := ReadStatInput(args, c.reference, analysis.Options{Alpha: c.alpha, Confidence: c.confidence})
	if err != nil {
		return cli.UsageError{Err: fmt.Errorf("stat: %w", err)}
	}
	st, err := AnalyzeStat(in)
	if err != nil {
		return cli.UsageError{Err: fmt.Errorf("stat: %w", err)}
	}
	return c.out.Render(stdout, args, func(w io.Writer, format cli.Format) error {
		if format == cli.JSON {
			return WriteStatJSON(w, st, Info{Version: c.Version}) // schema hwpprobe-stat/1, docs/stat.md
		}
		return WriteStatText(w, st)
	})
}
