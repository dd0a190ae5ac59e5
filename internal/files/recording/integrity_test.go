// SPDX-License-Identifier: Apache-2.0

package recording

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/zstd"
)

// v1Fixture reads a recording written by format 1.0's writer.
func v1Fixture(t testing.TB, name string) []byte { t.Helper(); return fixture(t, "v1", name) }

// v2Fixture reads a recording written by format 2.1's writer.
func v2Fixture(t testing.TB, name string) []byte { t.Helper(); return fixture(t, "v2", name) }

func fixture(t testing.TB, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// encodings returns the encodings of a file's records.
func encodings(t testing.TB, b []byte) map[byte]bool {
	t.Helper()
	out := map[byte]bool{}
	for off := fileHeaderLen; off+frameHeaderLen <= len(b); {
		out[b[off+1]] = true
		off += frameHeaderLen + int(binary.LittleEndian.Uint32(b[off+4:]))
	}
	return out
}

// frame builds one whole record of a file of the given major version,
// with a correct checksum.
func frame(major uint16, typ RecordType, enc byte, payload []byte) []byte {
	b := []byte{byte(typ), enc, 0, 0}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
	b = binary.LittleEndian.AppendUint32(b, frameChecksum(major, b, payload))
	return append(b, payload...)
}

// withVersion returns b with its header's version replaced.
func withVersion(b []byte, major, minor uint16) []byte {
	c := bytes.Clone(b)
	binary.LittleEndian.PutUint16(c[8:], major)
	binary.LittleEndian.PutUint16(c[10:], minor)
	return c
}

// readOutcome reads b as show does and says whether the reader took it as
// a whole, undamaged file.
func readOutcome(b []byte) (rec *Recording, whole bool, err error) {
	rec, err = Read(bytes.NewReader(b))
	if err != nil {
		return nil, false, err
	}
	return rec, rec.Complete(), nil
}

// TestFlippedByteAnywhere flips the lowest bit, the highest bit and all
// bits of every byte of every record (type, encoding, reserved, length,
// checksum and payload) of a file of each version and checks that no flip
// goes unnoticed: the reader reports the file as damaged, never complete.
func TestFlippedByteAnywhere(t *testing.T) {
	files := map[string][]byte{"3.0": writeFile(t), "3.0 encoding 3": scanFileEnc(t, 1, true),
		"2.1": v2Fixture(t, "synthetic-2runs.rec"), "1.0": v1Fixture(t, "synthetic-2runs.rec")}
	for name, b := range files {
		t.Run(name, func(t *testing.T) {
			if _, whole, err := readOutcome(b); err != nil || !whole {
				t.Fatalf("undamaged file: whole %v, err %v", whole, err)
			}
			for off := fileHeaderLen; off < len(b); off++ {
				for _, mask := range []byte{0x01, 0x80, 0xff} {
					c := bytes.Clone(b)
					c[off] ^= mask
					rec, whole, err := readOutcome(c)
					if whole {
						t.Fatalf("byte %d ^ %#x: read as a complete file", off, mask)
					}
					if err == nil && !errors.Is(rec.Problem, ErrCorrupt) && !errors.Is(rec.Problem, ErrTruncated) {
						t.Fatalf("byte %d ^ %#x: problem %v", off, mask, rec.Problem)
					}
				}
			}
		})
	}
}

// TestZeroTail: a file followed by zeros (a zero-filled tail after a crash,
// or `cat /dev/zero`) is corrupt, whichever record the zeros follow.
func TestZeroTail(t *testing.T) {
	b := writeFile(t)
	zeros := make([]byte, 64<<10)
	for cut := fileHeaderLen; cut <= len(b); cut++ {
		c := append(bytes.Clone(b[:cut]), zeros...)
		rec, _, err := readOutcome(c)
		if err == nil {
			err = rec.Problem
		}
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("cut %d + zeros: %v; want ErrCorrupt", cut, err)
		}
	}
}

// zeroReader reads zeros forever.
type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestEndlessZeros: reading stops at the first zero header, or at the end
// of the record the zeros complete, instead of reading zeros forever.
func TestEndlessZeros(t *testing.T) {
	b := writeFile(t)
	for _, cut := range []int{len(b) - 5, len(b)} {
		r := io.MultiReader(bytes.NewReader(b[:cut]), io.LimitReader(zeroReader{}, 4*MaxPayload))
		rec, err := Read(r)
		if err != nil || !errors.Is(rec.Problem, ErrCorrupt) {
			t.Errorf("cut %d: err %v, problem %v; want ErrCorrupt", cut, err, rec.Problem)
		}
	}
}

// TestStreamRules: records that break the format's rules are corrupt, not
// skipped.
func TestStreamRules(t *testing.T) {
	b := writeFile(t)
	note := []byte(`{"time_ns":1,"text":"x"}`)
	tests := []struct {
		name string
		file []byte
		want string
	}{
		{"record after end", append(bytes.Clone(b), frame(2, TypeNote, encJSON, note)...), "after the end record"},
		{"one byte after end", append(bytes.Clone(b), 0), "after the end record"},
		{"type 0", insertBeforeEnd(t, b, frame(2, 0, encJSON, nil)), "type 0"},
		{"zero header", insertBeforeEnd(t, b, make([]byte, frameHeaderLen)), "type 0"},
		{"unknown type", insertBeforeEnd(t, b, frame(2, 42, encJSON, []byte(`{}`))), "unknown type 42"},
		{"unknown type, 1.0", v1WithUnknown(t), "unknown type 42"},
		{"reserved bytes", insertBeforeEnd(t, b, withReserved(frame(2, TypeNote, encJSON, note))), "reserved"},
	}
	for _, tt := range tests {
		rec, whole, err := readOutcome(tt.file)
		if err != nil || whole || !errors.Is(rec.Problem, ErrCorrupt) || !strings.Contains(rec.Problem.Error(), tt.want) {
			t.Errorf("%s: err %v whole %v problem %v; want ErrCorrupt saying %q", tt.name, err, whole, rec.Problem, tt.want)
		}
	}
}

// insertBeforeEnd puts a record between b's last record (end) and the one
// before it.
func insertBeforeEnd(t testing.TB, b, rec []byte) []byte {
	t.Helper()
	off := fileHeaderLen
	last := off
	for off < len(b) {
		last = off
		off += frameHeaderLen + int(binary.LittleEndian.Uint32(b[off+4:]))
	}
	out := append(bytes.Clone(b[:last]), rec...)
	return append(out, b[last:]...)
}

func withReserved(rec []byte) []byte {
	rec[3] = 1
	binary.LittleEndian.PutUint32(rec[8:], frameChecksum(2, rec, rec[frameHeaderLen:]))
	return rec
}

// v1WithUnknown is the 1.0 fixture with a record of type 42 before its end.
func v1WithUnknown(t *testing.T) []byte {
	return insertBeforeEnd(t, v1Fixture(t, "synthetic-2runs.rec"), frame(1, 42, encJSON, []byte(`{}`)))
}

// TestNewerMinorSkipped: a newer minor version may add record types; they
// are skipped, counted, and the file is not called complete.
func TestNewerMinorSkipped(t *testing.T) {
	b := insertBeforeEnd(t, writeFile(t), frame(2, 42, encJSON, []byte(`{"x":1}`)))
	rec, whole, err := readOutcome(withVersion(b, VersionMajor, VersionMinor+1))
	if err != nil || rec.Problem != nil {
		t.Fatal(err, rec.Problem)
	}
	if rec.Skipped != 1 || whole || !errors.Is(rec.Issue(), ErrSkipped) || rec.End == nil {
		t.Errorf("Skipped %d, complete %v, issue %v, end %v", rec.Skipped, whole, rec.Issue(), rec.End)
	}
}

// zstdFrames compresses each of sizes zero bytes as one frame and
// concatenates them.
func zstdFrames(t *testing.T, sizes ...int) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	var out []byte
	for _, n := range sizes {
		out = enc.EncodeAll(make([]byte, n), out)
	}
	return out
}

// TestZipBomb: a small record whose zstd frame inflates far beyond the
// limit is refused before it is inflated, in both versions, and so are
// payloads of several frames and frames that lie about their size.
func TestZipBomb(t *testing.T) {
	big := zstdFrames(t, 200<<20)
	lying := bytes.Clone(zstdFrames(t, 100<<10))
	tests := []struct {
		name    string
		major   uint16
		payload []byte
		want    string
	}{
		{"200 MiB frame", 2, big, "limit"},
		{"200 MiB frame, 1.0", 1, big, "limit"},
		{"16 frames of 200 MiB", 2, bytes.Repeat(big, 16), "after the zstd frame"},
		{"16 frames of 200 MiB, 1.0", 1, bytes.Repeat(big, 16), "after the zstd frame"},
		{"two small frames", 2, zstdFrames(t, 300, 300), "after the zstd frame"},
		{"size not declared", 2, zstdFrames(t, 10), "does not declare"},
		{"declared size too small", 2, shrinkFCS(t, lying), ""},
	}
	for _, tt := range tests {
		file := writeFile(t)
		if tt.major == 1 {
			file = v1Fixture(t, "synthetic-2runs.rec")
		}
		file = insertBeforeEnd(t, file, frame(tt.major, TypeNote, encZstdJSON, tt.payload))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		rec, _, err := readOutcome(file)
		runtime.ReadMemStats(&after)
		if err != nil || !errors.Is(rec.Problem, ErrCorrupt) || !strings.Contains(rec.Problem.Error(), tt.want) {
			t.Errorf("%s: err %v, problem %v; want ErrCorrupt saying %q", tt.name, err, rec.Problem, tt.want)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 8<<20 {
			t.Errorf("%s: reading allocated %d MiB", tt.name, got>>20)
		}
	}
}

// shrinkFCS rewrites a zstd frame's declared content size (2 or 4 bytes,
// as the encoder wrote it for 100 KiB) to 1000 bytes.
func shrinkFCS(t *testing.T, f []byte) []byte {
	t.Helper()
	var h zstd.Header
	if err := h.Decode(f); err != nil || !h.HasFCS {
		t.Fatalf("test frame: %v", err)
	}
	fcsLen := map[byte]int{1: 2, 2: 4, 3: 8}[f[4]>>6]
	at := h.HeaderSize - fcsLen
	switch fcsLen {
	case 2:
		binary.LittleEndian.PutUint16(f[at:], 1000-256)
	case 4:
		binary.LittleEndian.PutUint32(f[at:], 1000)
	default:
		t.Fatalf("FCS field of %d bytes", fcsLen)
	}
	return f
}

// TestFixturesRead: every 1.0 and 2.1 fixture reads whole (the cut ones up
// to their cut), the 1.0 ones with the strict 1.0 checks.
func TestFixturesRead(t *testing.T) {
	for dir, version := range map[string]Version{"v1": {1, 0}, "v2": {2, 1}} {
		names, _ := filepath.Glob(filepath.Join("testdata", dir, "*.rec"))
		if len(names) == 0 {
			t.Fatalf("no fixtures in testdata/%s", dir)
		}
		for _, n := range names {
			rec, err := ReadFile(n)
			if err != nil {
				t.Fatalf("%s: %v", n, err)
			}
			cut := strings.HasSuffix(n, "-cut.rec")
			if got, want := rec.Complete(), !cut; got != want || (cut && !errors.Is(rec.Problem, ErrTruncated)) {
				t.Errorf("%s: complete %v, problem %v", n, got, rec.Problem)
			}
			if diff := cmp.Diff(version, rec.Version); diff != "" {
				t.Errorf("%s: %s", n, diff)
			}
		}
	}
}

// TestWriterSplitsLargeBatches: a trace batch whose payload would exceed
// the limit (lowered from MaxPayload to 16 KiB) is written as several
// records that read back as the batch.
func TestWriterSplitsLargeBatches(t *testing.T) {
	ev := make([]TraceEvent, 5000)
	for i := range ev {
		ev[i] = TraceEvent{TimeNs: int64(i), CPU: i % 512, PID: i, Comm: "kworker/123:4-events", MSR: 0x774, Value: uint64(i) * 0x9E3779B97F4A7C15}
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testMeta())
	if err != nil {
		t.Fatal(err)
	}
	w.limit = 16 << 10
	for _, r := range []Record{RunStart{Run: 1}, Trace{Run: 1, Events: ev, Lost: 7}} {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(End{Status: StatusComplete}); err != nil {
		t.Fatal(err)
	}
	records, err := readAllRecords(t, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var got []TraceEvent
	var lost uint64
	batches := 0
	for _, r := range records {
		if tr, ok := r.(Trace); ok {
			got, lost, batches = append(got, tr.Events...), lost+tr.Lost, batches+1
		}
	}
	if batches < 3 || lost != 7 {
		t.Errorf("%d trace records, lost %d; want the batch split, lost 7", batches, lost)
	}
	if diff := cmp.Diff(ev, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestConvert: every record of a 1.0 file comes back from its 2.0
// conversion, figures bit for bit; a cut file converts up to the cut and
// says so; a damaged one fails.
func TestConvert(t *testing.T) {
	for _, name := range []string{"synthetic-2runs.rec", "emu-spr.rec", "vm-trace.rec"} {
		src := v1Fixture(t, name)
		var out bytes.Buffer
		if err := Convert(&out, bytes.NewReader(src)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := readAllRecords(t, out.Bytes()); err != nil {
			t.Fatalf("%s converted: %v", name, err)
		}
		// Compared as JSON, which writes every float64 exactly (cmp is
		// slow on 224-CPU files): a converted row has every column, the
		// original may lack trailing ones, so whole recordings (rows
		// mapped onto their runs' columns) are compared.
		wantRec, _ := Read(bytes.NewReader(src))
		gotRec, _ := Read(bytes.NewReader(out.Bytes()))
		gotRec.Version = wantRec.Version
		if a, b := mustJSON(t, wantRec), mustJSON(t, gotRec); a != b {
			t.Errorf("%s: recording differs:\n%s", name, cmp.Diff(a, b))
		}
		if len(out.Bytes()) >= len(src) {
			t.Errorf("%s: %d bytes converted from %d", name, out.Len(), len(src))
		}
	}
	cut := v1Fixture(t, "emu-mtl-cut.rec")
	var out bytes.Buffer
	if err := Convert(&out, bytes.NewReader(cut)); !errors.Is(err, ErrTruncated) {
		t.Errorf("cut file: %v, want ErrTruncated", err)
	}
	if rec, err := Read(bytes.NewReader(out.Bytes())); err != nil || rec.Problem != nil || rec.End != nil || len(rec.Runs) != 1 {
		t.Errorf("cut file converted: err %v, problem %v, end %v", err, rec.Problem, rec.End)
	}
	bad := bytes.Clone(v1Fixture(t, "emu-mtl.rec"))
	bad[len(bad)/2] ^= 1
	if err := Convert(io.Discard, bytes.NewReader(bad)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("damaged file: %v, want ErrCorrupt", err)
	}
	after := append(bytes.Clone(v1Fixture(t, "synthetic-2runs.rec")), 0)
	if err := Convert(io.Discard, bytes.NewReader(after)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("byte after end: %v, want ErrCorrupt", err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestChangedType: a record whose type byte is changed into another known
// type, and its checksum computed anew so that the checksum cannot catch
// it, is corrupt, not read as a record of the other type with every field
// zero (a run-end read as an empty samples batch, leaving the run without
// its outcome); in files of encodings 3 and 4 and of format 2.1.
func TestChangedType(t *testing.T) {
	files := []struct {
		name  string
		major uint16
		b     []byte
	}{
		{"3.0", 3, writeFile(t)},
		{"3.0 encoding 3", 3, scanFileEnc(t, 1, true)},
		{"2.1", 2, v2Fixture(t, "synthetic-2runs.rec")},
	}
	for _, f := range files {
		changed := 0
		for off := fileHeaderLen; off < len(f.b); {
			size := int(binary.LittleEndian.Uint32(f.b[off+4:]))
			for _, typ := range RecordTypes() {
				if typ == RecordType(f.b[off]) || typ == TypeMeta || off == fileHeaderLen {
					continue // a meta record out of place is refused as such
				}
				c := bytes.Clone(f.b)
				payload := c[off+frameHeaderLen : off+frameHeaderLen+size]
				c[off] = byte(typ)
				binary.LittleEndian.PutUint32(c[off+8:], frameChecksum(f.major, c[off:off+8], payload))
				rec, whole, err := readOutcome(c)
				if err != nil || whole || !errors.Is(rec.Problem, ErrCorrupt) {
					t.Errorf("%s: %s record at offset %d changed into %s: err %v, whole %v, problem %v; want ErrCorrupt",
						f.name, RecordType(f.b[off]), off, typ, err, whole, rec.Problem)
				}
				changed++
			}
			off += frameHeaderLen + size
		}
		if changed == 0 {
			t.Errorf("%s: no record changed", f.name)
		}
	}
}
