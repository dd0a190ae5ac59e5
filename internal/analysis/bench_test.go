// SPDX-License-Identifier: Apache-2.0

package analysis_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hwpprobe/hwpprobe/internal/analysis"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/synth"
)

// synthFile writes a synthetic recording (package internal/synth: 10
// samples a second, 20 kernel MSR writes a second) of cpus x seconds.
func synthFile(b *testing.B, dir string, cpus, seconds int, seed uint64) string {
	path := filepath.Join(dir, fmt.Sprintf("s%d.hwpr", seed))
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	if err := synth.Write(w, synth.Config{CPUs: cpus, Hz: 10, Seconds: seconds, Seed: seed, TracePerSecond: 20}); err != nil {
		b.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkDiff analyses two synthetic 60-second recordings of 512 CPUs
// as `hwpprobe diff a b` does (ReadSources, then Analyze, disturbed runs
// kept: the generator's EPP flips disturb every run), and, in the same
// run, scans the same files with a batch function that does nothing: the
// reader's raw decode, the floor for the analysis. ns/sample is per
// sample of both files.
func BenchmarkDiff(b *testing.B) {
	const cpus, seconds = 512, 60
	dir := b.TempDir()
	paths := []string{synthFile(b, dir, cpus, seconds, 1), synthFile(b, dir, cpus, seconds, 2)}
	for _, c := range []struct {
		name string
		run  func() error
	}{
		{"scan", func() error {
			for _, p := range paths {
				if _, err := recording.ScanFile(p, func(recording.Record) error { return nil }); err != nil {
					return err
				}
			}
			return nil
		}},
		{"analyze", func() error {
			srcs, err := analysis.ReadSources(paths)
			if err != nil {
				return err
			}
			_, err = analysis.Analyze(srcs, analysis.Options{}, true)
			return err
		}},
	} {
		b.Run(fmt.Sprintf("cpus=%d/%s", cpus, c.name), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if err := c.run(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*2*seconds*10), "ns/sample")
		})
	}
}
