// SPDX-License-Identifier: Apache-2.0

package recording

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/klauspost/compress/zstd"
)

// Reader reads records one at a time.
type Reader struct {
	r       *bufio.Reader
	dec     *zstd.Decoder
	version Version
	off     int64 // offset of the next record
	n       int   // records read
	ended   bool  // the end record was read
	stored  bytes.Buffer
	decoded []byte
	// reuse: columnar batches are decoded into bd's buffers, reused for
	// the next batch (Scan).
	reuse bool
	bd    batchDec
	// parts: what of samples batches to decode (Scan).
	parts Parts
	// budget bounds what the whole file inflates and holds.
	budget *budget
	err    error // sticky
}

// NewReader checks the file header and returns a Reader positioned at the
// first record. It fails with ErrNotRecording, ErrVersion or ErrTruncated.
func NewReader(r io.Reader) (*Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	hdr := make([]byte, fileHeaderLen)
	n, err := io.ReadFull(br, hdr)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("recording: read header: %w", err)
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: the file is empty", ErrNotRecording)
	}
	v, err := parseFileHeader(hdr[:n])
	if err != nil {
		return nil, err
	}
	dec, err := newDecoder(v.maxPayload())
	if err != nil {
		return nil, fmt.Errorf("recording: zstd decoder: %w", err)
	}
	return &Reader{r: br, dec: dec, version: v, off: fileHeaderLen, parts: PartRows, budget: newBudget()}, nil
}

// Version returns the file's format version.
func (r *Reader) Version() Version { return r.version }

// Offset returns the file offset just past the last record read.
func (r *Reader) Offset() int64 { return r.off }

// Next returns the next record. At the end of a file that ends on a whole
// record it returns io.EOF; when the file ends inside a record it returns an
// error wrapping ErrTruncated; on a bad checksum or payload, a record type
// the file's version does not have, or anything after the end record, one
// wrapping ErrCorrupt. Errors are sticky.
func (r *Reader) Next() (Record, error) {
	if r.err != nil {
		return nil, r.err
	}
	rec, err := r.next()
	if err != nil {
		r.err = err
		r.dec.Close()
		return nil, err
	}
	r.n++
	return rec, nil
}

func (r *Reader) next() (Record, error) {
	var h [frameHeaderLen]byte
	n, err := io.ReadFull(r.r, h[:])
	switch {
	case err == io.EOF:
		return nil, io.EOF
	case r.ended:
		return nil, r.corrupt("data after the end record")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return nil, r.truncated(n)
	case err != nil:
		return nil, fmt.Errorf("recording: read at offset %d: %w", r.off, err)
	}
	typ, enc := RecordType(h[0]), h[1]
	size := binary.LittleEndian.Uint32(h[4:])
	if err := r.checkHeader(typ, enc, h[2]|h[3], size); err != nil {
		return nil, err
	}
	payload, err := r.readPayload(size)
	if err != nil {
		return nil, err
	}
	r.budget.read += frameHeaderLen + int64(size)
	if frameChecksum(r.version.Major, h[:], payload) != binary.LittleEndian.Uint32(h[8:]) {
		return nil, r.corrupt("record fails its checksum")
	}
	if enc != encJSON && enc != encColumns {
		if payload, err = inflate(r.dec, &r.decoded, payload, r.version.maxPayload(), r.version.Major > 1, r.budget); err != nil {
			return nil, r.corrupt("%s record: %v", typ, err)
		}
	}
	bd := &r.bd
	if !r.reuse {
		bd = new(batchDec)
	}
	bd.v2, bd.packed, bd.zd = enc == encZstdColumns, enc == encColumns, r.dec
	bd.budget = r.budget
	columnar := enc == encZstdColumns || enc == encColumns || enc == encZstdBatch
	var rec Record
	switch {
	case columnar && typ == TypeSamples:
		rec, err = bd.decodeSamples(payload, r.parts)
	case columnar:
		rec, err = bd.decodeTrace(payload)
	default:
		rec, err = r.decodePayload(typ, payload)
	}
	if err != nil {
		return nil, r.corrupt("%s record: %v", typ, err)
	}
	if (r.n == 0) != (typ == TypeMeta) {
		if r.n == 0 {
			return nil, r.corrupt("first record is %s, want meta", typ)
		}
		return nil, r.corrupt("second meta record")
	}
	r.ended = typ == TypeEnd
	r.off += frameHeaderLen + int64(size)
	return rec, nil
}

// checkHeader checks a frame header's fields before its payload is read.
func (r *Reader) checkHeader(typ RecordType, enc, reserved byte, size uint32) error {
	switch {
	case size > uint32(r.version.maxPayload()):
		return r.corrupt("record length %d exceeds the %d-byte limit", size, r.version.maxPayload())
	case enc > encZstdBatch,
		enc == encZstdColumns && (r.version.Major < 2 || (typ != TypeSamples && typ != TypeTrace)),
		enc >= encColumns && (r.version.Major < 3 || (typ != TypeSamples && typ != TypeTrace)):
		return r.corrupt("%s record of unknown payload encoding %d", typ, enc)
	case reserved != 0:
		return r.corrupt("reserved header bytes are not 0")
	case typ == 0:
		return r.corrupt("record of type 0")
	case !slices.Contains(RecordTypes(), typ) && r.version.Minor <= knownMinor(r.version.Major):
		// Only a newer minor version may hold types this reader lacks.
		return r.corrupt("record of unknown type %d in a version %s file", typ, r.version)
	}
	return nil
}

// knownMinor is the newest minor version of a major this reader knows.
func knownMinor(major uint16) uint16 {
	switch major {
	case VersionMajor:
		return VersionMinor
	case 2:
		return 1
	}
	return 0
}

// readPayload reads a record's stored payload into a buffer reused across
// records and grown only as bytes arrive, so that a length field promising
// more than the file holds costs no allocation.
func (r *Reader) readPayload(size uint32) ([]byte, error) {
	r.stored.Reset()
	m, err := io.CopyN(&r.stored, r.r, int64(size))
	switch {
	case err == io.EOF:
		return nil, r.truncated(frameHeaderLen + int(m))
	case err != nil:
		return nil, fmt.Errorf("recording: read at offset %d: %w", r.off, err)
	}
	return r.stored.Bytes(), nil
}

func (r *Reader) truncated(got int) error {
	return fmt.Errorf("%w: %d bytes of an unfinished record at offset %d after %d whole records",
		ErrTruncated, got, r.off, r.n)
}

func (r *Reader) corrupt(format string, a ...any) error {
	return fmt.Errorf("%w at offset %d (record %d): %s", ErrCorrupt, r.off, r.n+1, fmt.Sprintf(format, a...))
}

// decodePayload decodes a JSON payload. Format 1.0 payloads are decoded
// strictly: 1.0 had no other fields, and every record type has a field no
// other type has, so a type byte (outside 1.0's checksum) changed into
// another known type shows as an unknown field.
func (r *Reader) decodePayload(t RecordType, p []byte) (Record, error) {
	if err := r.budget.charge(jsonCost(p), "JSON objects"); err != nil {
		return nil, err
	}
	strict := r.version == Version{1, 0}
	if !strict {
		if err := hasFields(p, requiredFields[t]); err != nil {
			return nil, err
		}
	}
	switch t {
	case TypeMeta:
		return decodeJSON[Meta](p, strict)
	case TypeRunStart:
		return decodeJSON[RunStart](p, strict)
	case TypeSnapshot:
		return decodeJSON[Snapshot](p, strict)
	case TypeSamples:
		rec, err := decodeJSON[Samples](p, strict)
		if err != nil || r.parts == PartRows {
			return rec, err
		}
		return rec.(Samples).keep(r.parts), nil
	case TypeTrace:
		return decodeJSON[Trace](p, strict)
	case TypeProcess:
		return decodeJSON[Process](p, strict)
	case TypeRunEnd:
		return decodeJSON[RunEnd](p, strict)
	case TypeNote:
		return decodeJSON[Note](p, strict)
	case TypeEnd:
		return decodeJSON[End](p, strict)
	}
	return Unknown{RecType: t, Payload: bytes.Clone(p)}, nil
}

func decodeJSON[T Record](p []byte, strict bool) (Record, error) {
	var v T
	if !strict {
		if err := json.Unmarshal(p, &v); err != nil {
			return nil, err
		}
		return v, nil
	}
	d := json.NewDecoder(bytes.NewReader(p))
	d.DisallowUnknownFields()
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}

// requiredFields are the fields a record type's JSON payload always
// holds (docs/recording-format.md, "Record types"). Each type has one no
// other type has, so that a record whose type byte was changed, and its
// checksum computed anew, is refused instead of read as a record of the
// other type with every field zero.
var requiredFields = map[RecordType][]string{
	TypeMeta:     {"tool", "kind"},
	TypeRunStart: {"run", "command", "time_ns"},
	TypeSnapshot: {"run", "phase", "format", "data"},
	TypeSamples:  {"run", "cpu_columns", "samples"},
	TypeTrace:    {"run", "events"},
	TypeProcess:  {"run", "pid", "counts"},
	TypeRunEnd:   {"run", "exit_code"},
	TypeNote:     {"time_ns", "text"},
	TypeEnd:      {"time_ns", "status"},
}

// hasFields checks that the JSON object p holds every field of names at
// its top level.
func hasFields(p []byte, names []string) error {
	if len(names) == 0 {
		return nil
	}
	var fields map[string]skipped
	if err := json.Unmarshal(p, &fields); err != nil {
		return err
	}
	for _, n := range names {
		if _, ok := fields[n]; !ok {
			return fmt.Errorf("no %q field", n)
		}
	}
	return nil
}

// skipped is a JSON value decoded as nothing: its bytes are not copied.
type skipped struct{}

// UnmarshalJSON implements json.Unmarshaler.
func (*skipped) UnmarshalJSON([]byte) error { return nil }
