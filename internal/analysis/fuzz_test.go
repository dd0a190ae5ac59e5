// SPDX-License-Identifier: Apache-2.0

package analysis_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"strings"
	"testing"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
)

// experimentFixture is a real emulated `hwpprobe diff` experiment (format
// 2.1: each record's CRC-32C covers its frame header's first 8 bytes and
// its payload; docs/recording-format.md, "File layout").
const experimentFixture = "../files/recording/testdata/v2/emu-mtl-diff.rec"

// frames splits a format 2+ file into its header and records (frame
// header and payload each).
func frames(t testing.TB, b []byte) (header []byte, recs [][]byte) {
	t.Helper()
	const fileHeader, frameHeader = 12, 12
	header, b = b[:fileHeader], b[fileHeader:]
	for len(b) >= frameHeader {
		n := frameHeader + int(binary.LittleEndian.Uint32(b[4:8]))
		if n > len(b) {
			t.Fatalf("fixture: record of %d bytes past the end", n)
		}
		recs, b = append(recs, b[:n]), b[n:]
	}
	return header, recs
}

// frame builds a record of type typ holding payload as plain JSON
// (encoding 0), with its checksum.
func frame(typ byte, payload []byte) []byte {
	h := make([]byte, 12)
	h[0], h[1] = typ, 0
	binary.LittleEndian.PutUint32(h[4:8], uint32(len(payload)))
	tab := crc32.MakeTable(crc32.Castagnoli)
	binary.LittleEndian.PutUint32(h[8:12], crc32.Update(crc32.Checksum(h[:8], tab), tab, payload))
	return append(h, payload...)
}

// FuzzExperimentRecords analyses an experiment file one of whose records
// the fuzzer replaced, behind a valid checksum, by any type and payload
// (hostile run-start, run-end, process or snapshot records that the
// checksum no longer keeps out): reading and analysing it never panics,
// and an error is one line.
func FuzzExperimentRecords(f *testing.F) {
	good, err := os.ReadFile(experimentFixture)
	if err != nil {
		f.Fatal(err)
	}
	header, recs := frames(f, good)
	for i, r := range recs {
		if r[1] == 0 && len(r) < 4096 { // the plain-JSON records: meta, run-start, run-end ...
			f.Add(uint8(i), r[0], r[12:])
		}
	}
	f.Add(uint8(3), byte(7), []byte(`{"run":1,"exit_code":-1}`))
	f.Fuzz(func(t *testing.T, idx uint8, typ byte, payload []byte) {
		var file bytes.Buffer
		file.Write(header)
		for i, r := range recs {
			if i == int(idx)%len(recs) {
				file.Write(frame(typ, payload))
				continue
			}
			file.Write(r)
		}
		path := t.TempDir() + "/x.rec"
		if err := os.WriteFile(path, file.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		srcs, err := analysis.ReadSources([]string{path})
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("ReadSources error of several lines: %q", err)
			}
			return
		}
		for _, keep := range []bool{false, true} {
			if _, err := analysis.Analyze(srcs, analysis.Options{}, keep); err != nil && strings.Contains(err.Error(), "\n") {
				t.Fatalf("Analyze error of several lines: %q", err)
			}
		}
		if _, err := recording.ReadFile(path); err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("recording.ReadFile error of several lines: %q", err)
		}
	})
}
