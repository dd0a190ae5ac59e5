// SPDX-License-Identifier: Apache-2.0

package recording

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/files/atomicfile"
	"github.com/hwpprobe/hwpprobe/internal/files/iocheck"
)

// ConvertFile is `hwpprobe convert` (docs/convert.md): it converts the
// recording at in into out, never over in (by any name), and through a
// temporary file given out's name only when complete. A recording cut
// short is converted up to its last whole record, with a note on stderr.
func ConvertFile(stderr io.Writer, in, out string) error {
	files := iocheck.Set{Inputs: []string{in}, Outputs: []iocheck.Output{{Path: out}}, Streams: []iocheck.Stream{iocheck.Stderr()}}
	if err := cli.CheckFiles("convert", files); err != nil {
		return err
	}
	src, err := os.Open(in)
	if err != nil {
		return err
	}
	defer src.Close()
	file, err := atomicfile.Create(out, atomicfile.Options{Inputs: []string{in}, Replace: true})
	if errors.Is(err, atomicfile.ErrSameFile) {
		return cli.Usagef("convert: %w", err)
	}
	if err != nil {
		return fmt.Errorf("convert: cannot create %s: %w", out, err)
	}
	defer file.Abort()
	err = Convert(file, src)
	truncated := errors.Is(err, ErrTruncated)
	if err != nil && !truncated {
		return fmt.Errorf("convert %s: %w", in, err)
	}
	if err := file.Commit(); err != nil {
		return err
	}
	if truncated {
		cli.Linef(stderr, "hwpprobe", "%s: %v; converted every whole record before it", in, err)
	}
	return nil
}
