// SPDX-License-Identifier: Apache-2.0

package recorder

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
	"github.com/hwpprobe/hwpprobe/internal/sampling/source"
)

// growingMSR answers every register with a value that grows on each read:
// a reader without I/O, so that the benchmark measures the recorder's own
// work (source.BenchmarkSampleCompute measures the sampler alone the same
// way).
type growingMSR struct{ v []uint64 }

func (g *growingMSR) ReadMSR(cpu int, _ uint32) (uint64, error) {
	g.v[cpu] += 1000
	return g.v[cpu], nil
}

// BenchmarkRecordSample is the recorder's work per sample, as its loop
// does it: the sample (source.Set's reads without I/O and the sampler's
// figures), its conversion to the recorded form, and its share of the
// once-a-second flush (FlushEvery at 10 Hz: a batch of 10 samples
// compressed and written). Metrics: ns/cpu/sample and ns/sample (this
// process's time); allocs/op and B/op are per sample. The reads of a
// real machine add their system calls (source.BenchmarkSampleRealPerf,
// bench/observer/run.sh).
func BenchmarkRecordSample(b *testing.B) {
	for _, n := range []int{2, 14, 128} {
		b.Run(fmt.Sprintf("cpus=%d", n), func(b *testing.B) {
			topo := make([]sampler.Topo, n)
			for i := range topo {
				topo[i] = sampler.Topo{CPU: i, Core: i / 2}
			}
			set, err := source.Open(source.Config{Root: b.TempDir(), CPUs: topo, MSR: &growingMSR{v: make([]uint64, n)}})
			if err != nil {
				b.Fatal(err)
			}
			defer set.Close()
			smp, err := sampler.New(set)
			if err != nil {
				b.Fatal(err)
			}
			w, err := recording.NewWriter(io.Discard, recording.Meta{})
			if err != nil {
				b.Fatal(err)
			}
			sk := &sink{w: w}
			bufs := &buffers{started: true}
			var s sampler.Sample
			time.Sleep(time.Millisecond) // a first interval that is not empty
			perFlush := int(FlushEvery / (100 * time.Millisecond))
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if err := bufs.take(smp, &s, hwp.MSR_IA32_HWP_REQUEST); err != nil {
					b.Fatal(err)
				}
				if (i+1)%perFlush == 0 {
					flush(sk, bufs, nil, 1)
				}
			}
			flush(sk, bufs, nil, 1)
			el := time.Since(start)
			if sk.err != nil {
				b.Fatal(sk.err)
			}
			b.ReportMetric(float64(el.Nanoseconds())/float64(b.N), "ns/sample")
			b.ReportMetric(float64(el.Nanoseconds())/float64(b.N)/float64(n), "ns/cpu/sample")
		})
	}
}
