// SPDX-License-Identifier: Apache-2.0

package timeline

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/synth"
)

// BenchmarkBuild builds the timeline of a synthetic 30-second recording
// of 512 CPUs (10 samples and 20 kernel writes a second), per core type
// and with series per CPU, and, in the same run, scans it with a batch
// function that does nothing: the reader's raw decode, the floor.
// ns/sample is per sample of the file. bench/timeline/run.sh measures a
// whole hour.
func BenchmarkBuild(b *testing.B) {
	const cpus, seconds = 512, 30
	path := filepath.Join(b.TempDir(), "synth.hwpr")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	if err := synth.Write(w, synth.Config{CPUs: cpus, Hz: 10, Seconds: seconds, Seed: 1, TracePerSecond: 20}); err != nil {
		b.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	for _, c := range []struct {
		name string
		run  func() error
	}{
		{"scan", func() error {
			_, err := recording.ScanFile(path, func(recording.Record) error { return nil })
			return err
		}},
		{"timeline", func() error { _, err := Build([]string{path}, Options{}); return err }},
		{"per-cpu", func() error { _, err := Build([]string{path}, Options{PerCPU: true}); return err }},
	} {
		b.Run(fmt.Sprintf("cpus=%d/%s", cpus, c.name), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.run(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*seconds*10), "ns/sample")
		})
	}
}
