package recording

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

// Reader reads records one at a time.
type Reader struct {
	r       *bufio.Reader
	dec     *zstd.Decoder
	version Version
	off     int64 // offset of the next record
	n       int   // records read
	err     error // sticky
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
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderMaxMemory(maxDecoded))
	if err != nil {
		return nil, fmt.Errorf("recording: zstd decoder: %w", err)
	}
	return &Reader{r: br, dec: dec, version: v, off: fileHeaderLen}, nil
}

// Version returns the file's format version.
func (r *Reader) Version() Version { return r.version }

// Offset returns the file offset just past the last record read.
func (r *Reader) Offset() int64 { return r.off }

// Next returns the next record. At the end of a file that ends on a whole
// record it returns io.EOF; when the file ends inside a record it returns an
// error wrapping ErrTruncated, and on a bad checksum or payload one
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
	case errors.Is(err, io.ErrUnexpectedEOF):
		return nil, r.truncated(n)
	case err != nil:
		return nil, fmt.Errorf("recording: read at offset %d: %w", r.off, err)
	}
	typ, enc := RecordType(h[0]), h[1]
	size := binary.LittleEndian.Uint32(h[4:])
	sum := binary.LittleEndian.Uint32(h[8:])
	if size > maxStored {
		return nil, r.corrupt("record length %d exceeds the %d-byte limit", size, maxStored)
	}
	if enc != encJSON && enc != encZstdJSON {
		return nil, r.corrupt("unknown payload encoding %d", enc)
	}
	payload := make([]byte, size)
	if m, err := io.ReadFull(r.r, payload); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF {
			return nil, r.truncated(frameHeaderLen + m)
		}
		return nil, fmt.Errorf("recording: read at offset %d: %w", r.off, err)
	}
	if checksum(payload) != sum {
		return nil, r.corrupt("%s record fails its checksum", typ)
	}
	if enc == encZstdJSON {
		if payload, err = r.dec.DecodeAll(payload, nil); err != nil {
			return nil, r.corrupt("%s record: %v", typ, err)
		}
	}
	rec, err := decodePayload(typ, payload)
	if err != nil {
		return nil, r.corrupt("%s record: %v", typ, err)
	}
	if (r.n == 0) != (typ == TypeMeta) {
		if r.n == 0 {
			return nil, r.corrupt("first record is %s, want meta", typ)
		}
		return nil, r.corrupt("second meta record")
	}
	r.off += frameHeaderLen + int64(size)
	return rec, nil
}

func (r *Reader) truncated(got int) error {
	return fmt.Errorf("%w: %d bytes of an unfinished record at offset %d after %d whole records",
		ErrTruncated, got, r.off, r.n)
}

func (r *Reader) corrupt(format string, a ...any) error {
	return fmt.Errorf("%w at offset %d (record %d): %s", ErrCorrupt, r.off, r.n+1, fmt.Sprintf(format, a...))
}

func decodePayload(t RecordType, p []byte) (Record, error) {
	switch t {
	case TypeMeta:
		return decodeJSON[Meta](p)
	case TypeRunStart:
		return decodeJSON[RunStart](p)
	case TypeSnapshot:
		return decodeJSON[Snapshot](p)
	case TypeSamples:
		return decodeJSON[Samples](p)
	case TypeTrace:
		return decodeJSON[Trace](p)
	case TypeProcess:
		return decodeJSON[Process](p)
	case TypeRunEnd:
		return decodeJSON[RunEnd](p)
	case TypeNote:
		return decodeJSON[Note](p)
	case TypeEnd:
		return decodeJSON[End](p)
	}
	return Unknown{RecType: t, Payload: p}, nil
}

func decodeJSON[T Record](p []byte) (Record, error) {
	var v T
	if err := json.Unmarshal(p, &v); err != nil {
		return nil, err
	}
	return v, nil
}
