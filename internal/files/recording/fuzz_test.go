// SPDX-License-Identifier: Apache-2.0

package recording

import (
	"bytes"
	"errors"
	"runtime"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// FuzzRead: whatever the bytes, Read returns a recording or an error
// wrapping one of the package's sentinels, and never panics, allocating
// a bounded multiple of the reader's budget for so many bytes (garbage
// included: TestBombAcrossRecords); Scan (reused batch buffers) agrees
// with it on what went wrong and on the rows read.
func FuzzRead(f *testing.F) {
	good := writeFileF(f)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte(Magic + "\x01\x00\x00\x00"))
	f.Add(append(bytes.Clone(good), make([]byte, 64)...))
	f.Add(v1Fixture(f, "synthetic-2runs.rec"))
	// Bombs of records inflating to the payload limit: refused before
	// anything is inflated, so the fuzzer can afford them (those of
	// smaller records inflate budgetSlack first: TestBombAcrossRecords).
	for _, b := range bombs(f) {
		if b.size > MaxPayload/2 {
			f.Add(bombFile(f, 3, VersionMinor+b.minor, b.rec, 5))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		rec, err := Read(bytes.NewReader(b))
		runtime.ReadMemStats(&after)
		if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(budgetSlack+inflateRatio*len(b)); got > 8*limit {
			t.Fatalf("reading %d bytes allocated %d MiB, more than 8 x %d MiB", len(b), got>>20, limit>>20)
		}
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

// writeFileF is a complete file of sampleRecords, for fuzz targets.
func writeFileF(f *testing.F) []byte {
	f.Helper()
	return writeRecords(f, false, sampleRecords()...)
}

// FuzzBatch: whatever a columnar payload holds (behind its CRC, which
// FuzzRead's mutations rarely get past), decoding it as any of the three
// encodings gives a batch or an error wrapping errColumns, never a panic.
func FuzzBatch(f *testing.F) {
	z, err := zstd.NewWriter(nil)
	if err != nil {
		f.Fatal(err)
	}
	defer z.Close()
	var e batchEnc
	for _, s := range []Samples{steadySamples(), bigSteadySamples()} {
		if _, err := e.encodeSamples(s); err != nil {
			f.Fatal(err)
		}
		f.Add(bytes.Clone(e.b), uint8(2))
		f.Add(bytes.Clone(e.pack(z)), uint8(2))
		f.Add(bytes.Clone(e.unpacked()), uint8(0))
	}
	if _, err := e.encodeTrace(Trace{Run: 1, Events: []TraceEvent{{TimeNs: 5, CPU: 1, MSR: 0x774, Value: bigReg}}}); err != nil {
		f.Fatal(err)
	}
	f.Add(bytes.Clone(e.b), uint8(3))
	f.Fuzz(func(t *testing.T, p []byte, kind uint8) {
		bd := &batchDec{packed: kind&2 != 0, v2: kind&4 != 0}
		for _, parts := range []Parts{PartRows | PartCPURegColumns, PartCPURegColumns | PartSummaries} {
			var err error
			if kind&1 == 0 {
				_, err = bd.decodeSamples(bytes.Clone(p), parts)
			} else {
				_, err = bd.decodeTrace(bytes.Clone(p))
			}
			if err != nil && !errors.Is(err, errColumns) {
				t.Fatalf("error %v does not wrap errColumns", err)
			}
		}
	})
}

// bigSteadySamples is a batch large enough to be stored with its columns
// compressed one by one: ten samples of 600 CPUs.
func bigSteadySamples() Samples {
	s := Samples{Run: 3, CPUColumns: []string{"Avg_MHz", "Busy%"}}
	for k := range 10 {
		x := Sample{TimeNs: int64(k) * 100_000_000, IntervalNs: 100_000_000}
		for c := range 600 {
			x.CPUs = append(x.CPUs, CPURow{CPU: c, Core: c / 2, CoreType: "P",
				Values: []Value{Value(800 + (c*7+k*13)%3000), Value((c + k) % 100)},
				Regs:   []Reg{{0x774, 0x80002e17 ^ uint64(c%2)<<31}, {0x1b0, 6}}})
		}
		s.Samples = append(s.Samples, x)
	}
	return s
}
