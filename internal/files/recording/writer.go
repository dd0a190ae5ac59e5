// SPDX-License-Identifier: Apache-2.0

package recording

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"
)

// compressMin is the payload size below which records are stored plain:
// a zstd frame's overhead outweighs its gain on tiny JSON.
const compressMin = 128

// packMin is the columnar payload size from which columns may be
// compressed one by one (encoding 3); a smaller batch compresses better as
// one zstd frame (encoding 4), and costs little to inflate whole.
const packMin = 32 << 10

// Writer appends records to a recording. Each record goes to the
// underlying writer in one Write call as soon as it is given, as an
// independent zstd frame behind a checksummed frame header, so a reader
// recovers every record written before a crash.
//
// After a write error the Writer refuses further records (ErrClosed):
// a later record after a short write would sit behind garbage. When the
// destination is an *os.File, the Writer also truncates it back to the
// end of the last whole record.
type Writer struct {
	w   io.Writer
	enc *zstd.Encoder
	off int64 // bytes written that form whole records
	err error // sticky
	buf []byte
	// limit is the largest payload written, MaxPayload (lowered by
	// tests).
	limit int
	cols  batchEnc
	whole []byte // a batch compressed whole, to compare with its columns compressed
	// packAlways stores every batch with encoding 3 (tests).
	packAlways bool
	// packWhole is the last comparison's choice for large batches,
	// packLeft how many more batches take it.
	packWhole bool
	packLeft  int
}

// NewWriter writes the file header and meta record to w and returns a
// Writer for the records that follow.
func NewWriter(w io.Writer, meta Meta) (*Writer, error) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithZeroFrames(true),
		// Single segment: the frame header always declares the content size.
		zstd.WithSingleSegment(true))
	if err != nil {
		return nil, fmt.Errorf("recording: zstd encoder: %w", err)
	}
	wr := &Writer{w: w, enc: enc, limit: MaxPayload}
	if err := wr.write(appendFileHeader(nil)); err != nil {
		return nil, err
	}
	if err := wr.Write(meta); err != nil {
		return nil, err
	}
	return wr, nil
}

// Write appends one record. Unknown records are written back as they were
// read (for tools that copy recordings). A Samples or Trace batch whose
// payload would exceed MaxPayload is written as several records.
func (w *Writer) Write(r Record) error {
	if w.err != nil {
		return w.err
	}
	if u, ok := r.(Unknown); ok && u.RecType == 0 {
		return fmt.Errorf("recording: record type 0 is not valid")
	}
	payload, enc, err := w.encode(r)
	if errors.Is(err, errTooLarge) {
		if a, b, ok := split(r); ok {
			if err := w.Write(a); err != nil {
				return err
			}
			return w.Write(b)
		}
	}
	if err != nil {
		return err
	}
	switch {
	case enc == encColumns:
		payload, enc = w.packBatch(payload)
		if len(payload) > w.limit { // columns that zstd does not shrink add a byte each
			if a, b, ok := split(r); ok {
				if err := w.Write(a); err != nil {
					return err
				}
				return w.Write(b)
			}
			return fmt.Errorf("recording: %s record of %d bytes exceeds the %d-byte limit: %w", r.Type(), len(payload), w.limit, errTooLarge)
		}
	case len(payload) >= compressMin:
		if z := w.enc.EncodeAll(payload, nil); len(z) < len(payload) {
			payload, enc = z, encZstdJSON
		}
	}
	b := w.buf[:0]
	b = append(b, byte(r.Type()), enc, 0, 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
	b = binary.LittleEndian.AppendUint32(b, frameChecksum(VersionMajor, b, payload))
	b = append(b, payload...)
	w.buf = b
	return w.write(b)
}

// packBatch returns a columnar batch's stored payload, from its raw
// payload p, and its encoding: its columns compressed one by one
// (encoding 3), so that a reader inflates only those it decodes, unless
// the batch is smaller than packMin or compresses at least a tenth
// smaller as one zstd frame (encoding 4), as small batches do. Both are
// compressed to compare them once every packRecheck large batches, whose
// successors are alike.
func (w *Writer) packBatch(p []byte) ([]byte, byte) {
	whole := func() []byte {
		w.whole = w.enc.EncodeAll(w.cols.unpacked(), w.whole[:0])
		return w.whole
	}
	switch {
	case w.packAlways:
		return w.cols.pack(w.enc), encColumns
	case len(p) < packMin:
		return whole(), encZstdBatch
	case w.packLeft > 0 && w.packWhole:
		w.packLeft--
		return whole(), encZstdBatch
	case w.packLeft > 0:
		w.packLeft--
		return w.cols.pack(w.enc), encColumns
	}
	z, packed := whole(), w.cols.pack(w.enc)
	w.packLeft, w.packWhole = packRecheck-1, len(z) < len(packed)-len(packed)/10
	if w.packWhole {
		return z, encZstdBatch
	}
	return packed, encColumns
}

// packRecheck is how often the writer compares a large batch compressed
// whole with its columns compressed one by one.
const packRecheck = 16

// errTooLarge: a record's payload exceeds MaxPayload.
var errTooLarge = errors.New("record too large")

// encode returns a record's payload before compression and its encoding:
// columnar for sample and trace batches, JSON for the rest.
func (w *Writer) encode(r Record) ([]byte, byte, error) {
	var payload []byte
	enc := byte(encJSON)
	var err error
	switch r := r.(type) {
	case Unknown:
		payload = r.Payload
	case Samples:
		payload, err = w.cols.encodeSamples(r)
		enc = encColumns
	case Trace:
		payload, err = w.cols.encodeTrace(r)
		enc = encColumns
	default:
		if payload, err = json.Marshal(r); err != nil {
			err = fmt.Errorf("recording: encode %s record: %w", r.Type(), err)
		}
	}
	if err != nil {
		return nil, 0, err
	}
	if len(payload) > w.limit {
		return nil, 0, fmt.Errorf("recording: %s record of %d bytes exceeds the %d-byte limit: %w",
			r.Type(), len(payload), w.limit, errTooLarge)
	}
	return payload, enc, nil
}

// split halves a batch of more than one sample or event.
func split(r Record) (Record, Record, bool) {
	switch r := r.(type) {
	case Samples:
		if len(r.Samples) < 2 {
			return nil, nil, false
		}
		a, b := r, r
		h := len(r.Samples) / 2
		a.Samples, b.Samples = r.Samples[:h], r.Samples[h:]
		return a, b, true
	case Trace:
		if len(r.Events) < 2 {
			return nil, nil, false
		}
		a, b := r, r
		h := len(r.Events) / 2
		a.Events, b.Events, b.Lost = r.Events[:h], r.Events[h:], 0
		return a, b, true
	}
	return nil, nil, false
}

func (w *Writer) write(b []byte) error {
	n, err := w.w.Write(b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		w.err = fmt.Errorf("%w after a write error: %w", ErrClosed, err)
		if f, ok := w.w.(*os.File); ok && n > 0 {
			// Drop the partial record so the file ends on a whole one.
			_ = f.Truncate(w.off)
		}
		return fmt.Errorf("recording: write: %w", err)
	}
	w.off += int64(n)
	return nil
}

// Offset returns the number of bytes of whole records written.
func (w *Writer) Offset() int64 { return w.off }

// Err returns the write error that stopped the Writer, or nil.
func (w *Writer) Err() error { return w.err }

// Close writes the End record and, when the destination is an *os.File,
// syncs it to disk. It does not close the destination.
func (w *Writer) Close(end End) error {
	if err := w.Write(end); err != nil {
		return err
	}
	w.err = ErrClosed
	w.enc.Close()
	if f, ok := w.w.(*os.File); ok {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("recording: sync %s: %w", f.Name(), err)
		}
	}
	return nil
}
