// SPDX-License-Identifier: Apache-2.0

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

// Format version written by this package. Readers read every minor
// version of the majors they know (1, 2 and 3): a newer minor may add
// record types, which are skipped and counted (Recording.Skipped), and
// JSON fields and columns, which are ignored. Other majors are refused.
// Format 3 differs from 2 in the deltas of columnar batches, which may
// run from a CPU's row in the sample before (docs/recording-format.md);
// 3.1 added run-start's held, 3.2 end's stopping.
const (
	VersionMajor = 3
	VersionMinor = 2
)

// fileHeaderLen is the magic plus major and minor version (uint16 LE each).
const fileHeaderLen = 12

// frameHeaderLen is a record's frame header: type u8, encoding u8,
// reserved u16, stored length u32 LE, CRC-32C u32 LE.
const frameHeaderLen = 12

// Payload encodings (frame header byte 1).
const (
	encJSON        = 0 // plain JSON
	encZstdJSON    = 1 // JSON compressed as one zstd frame
	encZstdColumns = 2 // a format 2 columnar batch (samples, trace) compressed as one zstd frame; formats 2 and 3
	encColumns     = 3 // a columnar batch (samples, trace) whose columns are compressed one by one; format 3 and later
	encZstdBatch   = 4 // a columnar batch as in encoding 3 but for the columns' codecs, compressed as one zstd frame; format 3 and later
)

// MaxPayload is the most bytes a record's payload may hold since format 2,
// stored and decoded (after zstd): the writer splits larger sample and
// trace batches, and a reader refuses a larger length, or a zstd frame
// declaring a larger content size, before allocating anything for it.
const MaxPayload = 16 << 20

// maxPayloadV1 is the limit for format 1 files, whose writer had no
// decoded limit and refused stored payloads above 64 MiB.
const maxPayloadV1 = 64 << 20

// Errors. Reader errors wrap one of these, so callers test with errors.Is.
var (
	// ErrNotRecording: the file does not start with Magic.
	ErrNotRecording = errors.New("not an hwpprobe recording")
	// ErrVersion: the file's major version is not one this reader knows.
	ErrVersion = errors.New("unsupported recording format version")
	// ErrTruncated: the file ends inside a record (the writer crashed,
	// was killed or ran out of disk); every record before it was read.
	ErrTruncated = errors.New("recording is truncated")
	// ErrCorrupt: a record fails its checksum or cannot be decoded, or
	// the stream breaks a rule of the format (a record of an unknown
	// type, anything after the end record).
	ErrCorrupt = errors.New("recording is corrupt")
	// ErrSkipped: records of types added by a newer minor version were
	// skipped (Recording.Issue).
	ErrSkipped = errors.New("records were skipped")
	// ErrClosed: a record was written after Close or after a write error.
	ErrClosed = errors.New("recording writer is closed")
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// frameChecksum is a record's CRC-32C (Castagnoli). From format 2 on it covers
// the frame header's first 8 bytes (type, encoding, reserved, length) and
// the stored payload, so that no byte of a record escapes it; in format 1
// it covered the payload only.
func frameChecksum(major uint16, hdr, payload []byte) uint32 {
	if major == 1 {
		return crc32.Checksum(payload, castagnoli)
	}
	return crc32.Update(crc32.Checksum(hdr[:8], castagnoli), castagnoli, payload)
}

// Version is a format version.
type Version struct{ Major, Minor uint16 }

// String formats the version as "1.0".
func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// maxPayload is the version's limit on a payload, stored and decoded.
func (v Version) maxPayload() int {
	if v.Major == 1 {
		return maxPayloadV1
	}
	return MaxPayload
}

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
	if v.Major < 1 || v.Major > VersionMajor {
		return v, fmt.Errorf("%w %s: this hwpprobe reads versions 1.x to %d.x", ErrVersion, v, VersionMajor)
	}
	return v, nil
}
