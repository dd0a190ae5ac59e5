package recording

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzRead: whatever the bytes, Read returns a recording or an error
// wrapping one of the package's sentinels, and never panics.
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
