// SPDX-License-Identifier: Apache-2.0

package recording

import (
	"encoding/json"
	"io"
	"testing"
)

// countWriter counts bytes written.
type countWriter struct{ n int64 }

func (c *countWriter) Write(b []byte) (int, error) { c.n += int64(len(b)); return len(b), nil }

// batch returns one second of 100 ms samples of a 14-CPU machine whose
// figures vary as measured ones do (no two equal).
func batch(seed int) Samples {
	s := Samples{Run: 1, CPUColumns: SamplerCPUColumns(), PackageColumns: SamplerPackageColumns()}
	for i := range 10 {
		smp := Sample{TimeNs: int64(seed*10+i) * 100e6, IntervalNs: 100e6 + int64(i*1237)}
		for c := range 14 {
			f := float64((seed*10+i)*14 + c)
			smp.CPUs = append(smp.CPUs, CPURow{CPU: c, Core: c / 2, CoreType: "P",
				Values: []Value{Value(800 + f*1.37), Value(f * 0.071), Value(3000 + f*0.93), 1700.0312, Value(1 + f/1000), 50},
				Regs:   []Reg{{MSR: 0x774, Value: 0x40003e05}, {MSR: 0x1b0, Value: 6}}})
		}
		smp.Packages = []PackageRow{{Values: []Value{Value(12 + float64(i)*0.13), 9.1, NA(), NA(), 20.5, 54}}}
		s.Samples = append(s.Samples, smp)
	}
	return s
}

// BenchmarkWriteSamples writes one-second batches and reports the stored
// size per sample next to the plain JSON size of the same batches
// (stored/json is the compression ratio; both measured in this run).
func BenchmarkWriteSamples(b *testing.B) {
	var cw countWriter
	w, err := NewWriter(&cw, Meta{})
	if err != nil {
		b.Fatal(err)
	}
	start := cw.n
	var plain int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := batch(i)
		if err := w.Write(s); err != nil {
			b.Fatal(err)
		}
		j, _ := json.Marshal(s)
		plain += int64(len(j))
	}
	b.ReportMetric(float64(cw.n-start)/float64(b.N*10), "stored-B/sample")
	b.ReportMetric(float64(plain)/float64(b.N*10), "json-B/sample")
	b.ReportMetric(float64(cw.n-start)/float64(plain), "stored/json")
}

// BenchmarkRead reads back batches written by the writer.
func BenchmarkRead(b *testing.B) {
	var buf []byte
	bw := &appendWriter{&buf}
	w, _ := NewWriter(bw, Meta{})
	w.Write(RunStart{Run: 1})
	for i := range 100 {
		w.Write(batch(i))
	}
	b.SetBytes(int64(len(buf)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rd, err := NewReader(&sliceReader{b: buf})
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := rd.Next(); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
		}
	}
}

type appendWriter struct{ b *[]byte }

func (a *appendWriter) Write(p []byte) (int, error) { *a.b = append(*a.b, p...); return len(p), nil }

type sliceReader struct{ b []byte }

func (s *sliceReader) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.b)
	s.b = s.b[n:]
	return n, nil
}
