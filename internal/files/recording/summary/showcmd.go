// SPDX-License-Identifier: Apache-2.0

package summary

import (
	"fmt"
	"io"
	"math"

	"github.com/spf13/pflag"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/files/iocheck"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
)

// ShowCommand is `hwpprobe show`'s options (docs/show.md).
type ShowCommand struct {
	runID int
}

// AddFlags registers show's flags on f, filling c.
func (c *ShowCommand) AddFlags(f *pflag.FlagSet) {
	cli.IntVarP(f, &c.runID, "run", "", 0, 1, math.MaxInt32, "show only run N (default: every run)")
}

// Run writes the summary of the recording at path to w: its header, then
// each run's (or only --run's), and says where a damaged file ends.
func (c *ShowCommand) Run(path string, w io.Writer) error {
	if err := cli.CheckFiles("show", iocheck.Set{Inputs: []string{path}, Streams: cli.StdStreams()}); err != nil {
		return err
	}
	// Scanned batch by batch: memory does not grow with the file.
	col := NewCollector()
	rec, err := recording.ScanFileParts(path, Parts, func(r recording.Record) error { col.Add(r); return nil })
	if err != nil {
		return err
	}
	if err := WriteHeader(w, rec.Meta, rec.End, rec.Issue()); err != nil {
		return err
	}
	shown := 0
	for _, run := range rec.Runs {
		if c.runID != 0 && run.Start.Run != c.runID {
			continue
		}
		shown++
		if err := col.Summary(rec, run).WriteText(w); err != nil {
			return err
		}
	}
	if c.runID != 0 && shown == 0 {
		return cli.Usagef("show: %s has no run %d (it has %d runs)", path, c.runID, len(rec.Runs))
	}
	if len(rec.Runs) == 0 {
		if _, err := fmt.Fprintln(w, "no runs recorded"); err != nil {
			return err
		}
	}
	return rec.CorruptError(path)
}
