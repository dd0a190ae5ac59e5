package recording

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzRead: whatever the bytes, Read returns a recording or an error
// wrapping one of the package's sentinels, and never panics; Scan (reused
// batch buffers) agrees with it on what went wrong and on the rows read.
func FuzzRead(f *testing.F) {
	good := writeFileF(f)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte(Magic + "\x01\x00\x00\x00"))
	f.Add(append(bytes.Clone(good), make([]byte, 64)...))
	f.Add(v1Fixture(f, "synthetic-2runs.rec"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := Read(bytes.NewReader(b))
		if err != nil {
			if !errors.Is(err, ErrNotRecording) && !errors.Is(err, ErrVersion) && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if rec.Problem != nil && !errors.Is(rec.Problem, ErrTruncated) && !errors.Is(rec.Problem, ErrCorrupt) {
			t.Fatalf("unexpected problem %v", rec.Problem)
		}
		rows := 0
		scanned, err := Scan(bytes.NewReader(b), func(r Record) error {
			if s, ok := r.(Samples); ok {
				for _, x := range s.Samples {
					rows += len(x.CPUs)
				}
			}
			return nil
		})
		if err != nil || (scanned.Problem == nil) != (rec.Problem == nil) {
			t.Fatalf("Scan: err %v, problem %v; Read: problem %v", err, scanned.Problem, rec.Problem)
		}
		want := 0
		for _, r := range rec.Runs {
			for _, x := range r.Samples {
				want += len(x.CPUs)
			}
		}
		if rows != want {
			t.Fatalf("Scan saw %d CPU rows, Read %d", rows, want)
		}
		// A scan of some parts checks less: it finds no problem where a
		// whole one finds none, and sees the same rows then.
		rows = 0
		some, err := ScanParts(bytes.NewReader(b), PartCPURegColumns|PartSummaries, func(r Record) error {
			if s, ok := r.(Samples); ok {
				for _, x := range s.Samples {
					rows += len(x.CPUs)
				}
			}
			return nil
		})
		if err != nil || (rec.Problem == nil && (some.Problem != nil || rows != want)) {
			t.Fatalf("ScanParts: err %v, problem %v, %d rows; Read: problem %v, %d rows", err, some.Problem, rows, rec.Problem, want)
		}
	})
}

// writeFileF is writeFile for fuzz targets.
func writeFileF(f *testing.F) []byte {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testMeta())
	if err != nil {
		f.Fatal(err)
	}
	for _, r := range sampleRecords() {
		if err := w.Write(r); err != nil {
			f.Fatal(err)
		}
	}
	if err := w.Close(End{Status: StatusComplete}); err != nil {
		f.Fatal(err)
	}
	return buf.Bytes()
}
