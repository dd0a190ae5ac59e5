// SPDX-License-Identifier: Apache-2.0

package recording

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
)

// Inflate decompresses every zstd frame of the recording read from r, a
// record's whole payload or one column of a batch, into one reused buffer,
// and decodes nothing: what reading the recording costs at least, the
// reference of the read benchmarks (bench/recording). It checks no
// checksum and returns the bytes the frames inflate to.
func Inflate(r io.Reader) (int64, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var hdr [frameHeaderLen]byte
	if _, err := io.ReadFull(br, hdr[:fileHeaderLen]); err != nil {
		return 0, fmt.Errorf("recording: file header: %w", err)
	}
	dec, err := newDecoder(maxPayloadV1)
	if err != nil {
		return 0, err
	}
	defer dec.Close()
	var p, buf []byte
	var total int64
	b := newBudget()
	inflateFrame := func(z []byte) error {
		out, err := inflate(dec, &buf, z, maxPayloadV1, false, b)
		total += int64(len(out))
		return err
	}
	for {
		if _, err := io.ReadFull(br, hdr[:]); err == io.EOF {
			return total, nil
		} else if err != nil {
			return total, err
		}
		size := int(binary.LittleEndian.Uint32(hdr[4:]))
		if size > maxPayloadV1 {
			return total, fmt.Errorf("%w: record length %d", ErrCorrupt, size)
		}
		p = grow(p, size)
		if _, err := io.ReadFull(br, p); err != nil {
			return total, err
		}
		b.read += frameHeaderLen + int64(size)
		switch hdr[1] {
		case encZstdJSON, encZstdColumns, encZstdBatch:
			err = inflateFrame(p)
		case encColumns:
			err = columnFrames(p, RecordType(hdr[0]) == TypeSamples, inflateFrame)
		}
		if err != nil {
			return total, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
	}
}

// columnFrames calls fn with each compressed column of an encoding 3
// batch, of samples or of trace events.
func columnFrames(p []byte, samples bool, fn func([]byte) error) error {
	d := &colDec{b: p}
	d.uvarint() // run
	tables := 1
	if samples {
		for range 2 { // the CPU and package column names
			for range d.count(len(d.b), "strings") {
				d.bytes(d.count(len(d.b), "string bytes"))
			}
		}
		tables = 4
	} else {
		d.uvarint() // lost
	}
	var cols []column
	for range tables {
		_, cols = d.table(cols[:0], true)
		for _, c := range cols {
			if c.codec != codecZstd {
				continue
			}
			if err := fn(c.data); err != nil {
				return err
			}
		}
	}
	return d.err
}
