// SPDX-License-Identifier: Apache-2.0

package recording

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// bombRecord is a record of type typ whose payload is one zstd frame
// inflating to JSON of about size bytes: head, then filler repeated, then
// tail.
func bombRecord(t testing.TB, major uint16, typ RecordType, head, filler, tail string, size int) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	n := (size - len(head) - len(tail)) / len(filler)
	body := head + strings.Repeat(filler, n)
	if filler == "{}," {
		body = body[:len(body)-1] // no comma after the last object
	}
	return frame(major, typ, encZstdJSON, enc.EncodeAll([]byte(body+tail), nil))
}

// bombFile is the test file with count copies of rec before its end
// record, version major.minor.
func bombFile(t testing.TB, major, minor uint16, rec []byte, count int) []byte {
	t.Helper()
	return withVersion(insertBeforeEnd(t, writeFile(t), bytes.Repeat(rec, count)), major, minor)
}

// bombs are records of a few hundred bytes that each inflate, or decode,
// to the payload limit or to a sixteenth of it (docs/recording-format.md,
// "Bounds on reading"): notes and snapshots, which a reader keeps; JSON
// samples of empty rows, each a whole CPURow decoded; records of a type
// newer than the reader (in a file of the next minor version), which it
// skips.
func bombs(t testing.TB) []bomb {
	var out []bomb
	for _, size := range []int{MaxPayload - 64, MaxPayload / 16} {
		out = append(out,
			bomb{"notes", 0, bombRecord(t, 3, TypeNote, `{"time_ns":1,"text":"`, "a", `"}`, size), size},
			bomb{"snapshots", 0, bombRecord(t, 3, TypeSnapshot, `{"run":1,"phase":"after","time_ns":1,"format":"x","data":"`, "a", `"}`, size), size},
			bomb{"empty rows", 0, bombRecord(t, 3, TypeSamples, `{"run":1,"cpu_columns":[],"samples":[{"time_ns":1,"cpus":[`, "{},", `]}]}`, size/16), size / 16 / 3 * jsonObjectCost},
			bomb{"newer type", 1, bombRecord(t, 3, RecordType(9), `{"x":"`, "a", `"}`, size), size})
	}
	return out
}

// bomb is a record that inflates or decodes to size bytes, in a file of
// minor version VersionMinor+minor.
type bomb struct {
	name  string
	minor uint16
	rec   []byte
	size  int
}

// TestBombAcrossRecords: a file of small records that each inflate or
// decode to about the payload limit is refused as corrupt a few records
// in, having cost the reader no more than its budget (budgetSlack
// plus inflateRatio times the bytes read), whether it keeps the batches
// (Read) or scans them: it does not cost the limit once per record.
func TestBombAcrossRecords(t *testing.T) {
	for _, b := range bombs(t) {
		counts := []int{30, 200}
		if b.size > MaxPayload/2 {
			counts = []int{3, 30}
		}
		for _, count := range counts {
			file := bombFile(t, 3, VersionMinor+b.minor, b.rec, count)
			limit := uint64(budgetSlack + inflateRatio*len(file))
			for _, scan := range []bool{false, true} {
				name := fmt.Sprintf("%s of %d KiB, %d records (%d bytes), scan %v", b.name, b.size>>10, count, len(file), scan)
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				var rec *Recording
				var err error
				if scan {
					rec, err = Scan(bytes.NewReader(file), func(Record) error { return nil })
				} else {
					rec, err = Read(bytes.NewReader(file))
				}
				runtime.ReadMemStats(&after)
				if err != nil || !errors.Is(rec.Problem, ErrCorrupt) || !strings.Contains(rec.Problem.Error(), "zip bomb") {
					t.Errorf("%s: err %v, problem %v; want ErrCorrupt saying zip bomb", name, err, rec.Problem)
				}
				// What the reader allocated, garbage included (the JSON
				// decoder grows its slices step by step), is a few
				// times what it may hold at once.
				if got := after.TotalAlloc - before.TotalAlloc; got > 8*limit {
					t.Errorf("%s: reading allocated %d MiB, more than 8 x %d MiB", name, got>>20, limit>>20)
				}
			}
		}
	}
}
