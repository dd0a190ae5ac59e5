// Package recording reads and writes hwpprobe recordings: a versioned,
// compressed stream of typed records (metadata, runs, snapshots, samples,
// kernel MSR writes, process counters) written as a recording goes, so
// that a file cut short by a crash, a kill or a full disk still yields every
// whole record written before the cut. docs/recording-format.md describes
// the format byte by byte.
//
// A file is an experiment: one or more runs of a workload, each with the
// settings it ran under. `hwpprobe record` writes one run; `hwpprobe diff`
// writes many runs of two sides.
package recording

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Magic opens every recording. The first byte is not ASCII and the last is
// a newline, so that text-mode transfers and text files are caught (as in
// PNG's signature).
const Magic = "\x89HWPREC\n"

// Format version written by this package. Readers accept any minor version
// of a known major version (newer minors only add record types and JSON
// fields, which readers skip) and reject other major versions.
const (
	VersionMajor = 1
	VersionMinor = 0
)

// fileHeaderLen is the magic plus major and minor version (uint16 LE each).
const fileHeaderLen = 12

// frameHeaderLen is a record's frame header: type u8, encoding u8,
// reserved u16, stored length u32 LE, CRC-32C u32 LE.
const frameHeaderLen = 12

// Payload encodings (frame header byte 1).
const (
	encJSON     = 0 // plain JSON
	encZstdJSON = 1 // JSON compressed as one zstd frame
)

// Limits protect readers from a corrupt length field.
const (
	maxStored  = 64 << 20  // stored payload bytes per record
	maxDecoded = 256 << 20 // decoded payload bytes per record
)

// Errors. Reader errors wrap one of these, so callers test with errors.Is.
var (
	// ErrNotRecording: the file does not start with Magic.
	ErrNotRecording = errors.New("not an hwpprobe recording")
	// ErrVersion: the file's major version is not one this reader knows.
	ErrVersion = errors.New("unsupported recording format version")
	// ErrTruncated: the file ends inside a record (the writer crashed,
	// was killed or ran out of disk); every record before it was read.
	ErrTruncated = errors.New("recording is truncated")
	// ErrCorrupt: a record fails its checksum or cannot be decoded.
	ErrCorrupt = errors.New("recording is corrupt")
	// ErrClosed: a record was written after Close or after a write error.
	ErrClosed = errors.New("recording writer is closed")
)

// checksum is CRC-32C (Castagnoli) of a stored payload. MakeTable returns
// the package's own precomputed table for this polynomial.
func checksum(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }

// Version is a format version.
type Version struct{ Major, Minor uint16 }

// String formats the version as "1.0".
func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

func appendFileHeader(b []byte) []byte {
	b = append(b, Magic...)
	b = binary.LittleEndian.AppendUint16(b, VersionMajor)
	return binary.LittleEndian.AppendUint16(b, VersionMinor)
}

// parseFileHeader checks the magic and version of a file's first 12 bytes.
func parseFileHeader(b []byte) (Version, error) {
	if len(b) < len(Magic) || string(b[:len(Magic)]) != Magic {
		return Version{}, ErrNotRecording
	}
	if len(b) < fileHeaderLen {
		return Version{}, fmt.Errorf("%w: the file ends inside its header", ErrTruncated)
	}
	v := Version{binary.LittleEndian.Uint16(b[8:]), binary.LittleEndian.Uint16(b[10:])}
	if v.Major != VersionMajor {
		return v, fmt.Errorf("%w %s: this hwpprobe reads version %d.x", ErrVersion, v, VersionMajor)
	}
	return v, nil
}
