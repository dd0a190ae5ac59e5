// SPDX-License-Identifier: Apache-2.0

package recording

import (
	"fmt"
	"io"
)

// Convert reads the recording src, of any version this package reads, and
// writes the same records to dst in the current version. A source cut
// short is converted up to its last whole record, without an end record,
// and Convert returns an error wrapping ErrTruncated; any other problem
// (a corrupt record, records of a newer minor version that this reader
// skips, a write error) fails the conversion, and what was written to dst
// must be discarded.
func Convert(dst io.Writer, src io.Reader) error {
	rd, err := NewReader(src)
	if err != nil {
		return err
	}
	first, err := rd.Next()
	if err != nil {
		if err == io.EOF {
			err = fmt.Errorf("%w: the file has no meta record", ErrTruncated)
		}
		return err
	}
	w, err := NewWriter(dst, first.(Meta))
	if err != nil {
		return err
	}
	for {
		r, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch r := r.(type) {
		case Unknown:
			return fmt.Errorf("%w: a record of type %d, which this hwpprobe does not know (the file is version %s)",
				ErrSkipped, r.RecType, rd.Version())
		case End:
			if _, err := rd.Next(); err != io.EOF {
				return err
			}
			return w.Close(r)
		default:
			if err := w.Write(r); err != nil {
				return err
			}
		}
	}
}
