// SPDX-License-Identifier: Apache-2.0

package synth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/files/recording/export"
	"github.com/hwpprobe/hwpprobe/internal/files/recording/summary"
)

// sizes are the machines benchmarked: a hybrid laptop part, spr-2s, and a
// 512-CPU two-socket server; 10 samples a second.
var sizes = []int{14, 224, 512}

type countWriter struct{ n int64 }

func (c *countWriter) Write(b []byte) (int, error) { c.n += int64(len(b)); return len(b), nil }

// BenchmarkWrite writes one-second batches as record does and reports the
// cost per sample, the bytes stored per CPU-sample, and, measured in the
// same run, the bytes format 1.0 stored for the same figures unrounded
// (JSON in a zstd frame at the same level).
func BenchmarkWrite(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("cpus=%d", n), func(b *testing.B) {
			c := Config{CPUs: n, Hz: 10, Seed: 1}
			g, raw := New(c), New(Config{CPUs: n, Hz: 10, Seed: 1, Unrounded: true})
			const k = 8
			var batches [k]recording.Samples
			var v1 int64
			enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
			for i := range batches {
				batches[i] = g.Batch()
				j, _ := json.Marshal(raw.Batch())
				v1 += int64(len(enc.EncodeAll(j, nil))) + 12
			}
			var cw countWriter
			w, err := recording.NewWriter(&cw, Meta(c))
			if err != nil {
				b.Fatal(err)
			}
			start := cw.n
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := w.Write(batches[i%k]); err != nil {
					b.Fatal(err)
				}
			}
			samples := float64(b.N * 10)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/samples, "ns/sample")
			b.ReportMetric(float64(cw.n-start)/samples/float64(n), "B/cpu-sample")
			b.ReportMetric(float64(v1)/(k*10)/float64(n), "v1-B/cpu-sample")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// file writes a recording of seconds to a temporary file.
func file(b *testing.B, n, seconds int) string {
	path := filepath.Join(b.TempDir(), "synth.rec")
	var buf bytes.Buffer
	if err := Write(&buf, Config{CPUs: n, Hz: 10, Seconds: seconds, Seed: 1, TracePerSecond: 20}); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkRead scans a 60-second recording (recording.ScanFile), runs
// show's summary over it (scanning the parts it uses), exports it as CSV,
// and, in the same run,
// decompresses its zstd payloads alone: the floor for the other three.
func BenchmarkRead(b *testing.B) {
	for _, n := range sizes {
		path := file(b, n, 60)
		for _, c := range []struct {
			name string
			run  func() error
		}{
			{"scan", func() error {
				_, err := recording.ScanFile(path, func(recording.Record) error { return nil })
				return err
			}},
			{"show", func() error {
				col := summary.NewCollector()
				rec, err := recording.ScanFileParts(path, summary.Parts, func(r recording.Record) error { col.Add(r); return nil })
				if err == nil {
					err = col.Summary(rec, rec.Runs[0]).WriteText(io.Discard)
				}
				return err
			}},
			{"export", func() error { _, err := export.WriteCSVFile(io.Discard, path); return err }},
			{"zstd", func() error { return Inflate(path) }},
		} {
			b.Run(fmt.Sprintf("cpus=%d/%s", n, c.name), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if err := c.run(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*600), "ns/sample")
			})
		}
	}
}
