// SPDX-License-Identifier: Apache-2.0

package export

import (
	"errors"
	"fmt"
	"io"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/files/atomicfile"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
)

// Run is `hwpprobe export` (docs/export.md): it writes the recording at
// in, through write (WriteCSVFile, WriteParquetFile), to stdout or to the
// file out: never over the recording itself (by any name), and through a
// temporary file renamed to out only when complete. A damaged recording
// is exported up to the damage, then an error.
func Run(stdout, stderr io.Writer, in, out string, write func(io.Writer, string) (*recording.Recording, error)) error {
	var file *atomicfile.File
	if out != "" {
		var err error
		file, err = atomicfile.Create(out, atomicfile.Options{Inputs: []string{in}, Replace: true})
		if errors.Is(err, atomicfile.ErrSameFile) {
			return cli.Usagef("export: -o %w", err)
		}
		if err != nil {
			return fmt.Errorf("export: cannot create %s: %w", out, err)
		}
		defer file.Abort()
		stdout = file
	}
	rec, err := write(stdout, in)
	if rec == nil {
		return err
	}
	if err != nil {
		to := out
		if to == "" {
			to = "standard output"
		}
		return fmt.Errorf("export: write %s: %w", to, err)
	}
	if err := rec.Issue(); err != nil && !errors.Is(err, recording.ErrCorrupt) {
		cli.Linef(stderr, "hwpprobe", "%s: %v; exported what was read", in, err)
	}
	if file != nil {
		if err := file.Commit(); err != nil {
			return err
		}
	}
	if err := rec.CorruptError(in); err != nil {
		return fmt.Errorf("%w; exported what was read before it", err)
	}
	return nil
}
