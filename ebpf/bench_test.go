// SPDX-License-Identifier: Apache-2.0

package ebpf

import (
	"context"

	cebpf "github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkReader measures the user-space side per event: reading one
// record from the ring buffer and decoding it into an Event (the kernel
// side is bench/msr_cost.sh's business). The events are injected with
// BPF_PROG_TEST_RUN with the timer stopped, 10,000 per batch; injecting is
// ~30x slower than reading, so `-benchtime 200000x` keeps this short.
func BenchmarkReader(b *testing.B) {
	tr, err := Open(Options{MSRs: []uint32{0x774}, RingBytes: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	done, cancel := context.WithCancel(context.Background())
	cancel() // Run drains what is there and returns
	// The first Run detaches the (unused) tracepoint link, which waits for
	// an RCU grace period: keep that out of the measurement.
	if err := tr.Run(done, func(*Event) error { return nil }); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var got, sum uint64
	var reading time.Duration
	for n := 0; n < b.N; {
		k := min(10_000, b.N-n) // 56 bytes each: fits in 1 MiB
		b.StopTimer()
		for i := range k {
			if err := tr.Inject(-1, 0x774, uint64(n+i), false); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		t0 := time.Now()
		if err := tr.Run(done, func(e *Event) error { got++; sum += e.Value; return nil }); err != nil {
			b.Fatal(err)
		}
		reading += time.Since(t0)
		n += k
	}
	b.StopTimer()
	// ns/op also counts the benchmark's own timer stops per batch.
	b.ReportMetric(float64(reading.Nanoseconds())/float64(b.N), "ns/event")
	if got != uint64(b.N) {
		b.Fatalf("read %d events, injected %d", got, b.N)
	}
}

// BenchmarkInjectRate streams synthetic MSR writes through the kernel
// program, the ring buffer and the reader (default ring buffer and wake-up
// settings) and reports events/s delivered, events lost, and the kernel
// program's run time per event (BPF_ENABLE_STATS, Linux 5.8+). "max":
// as fast as BPF_PROG_TEST_RUN issues them from two threads (~80x the
// ~15,000/s timerload makes); "150k/s": paced at 10x that rate.
func BenchmarkInjectRate(b *testing.B) {
	b.Run("max", func(b *testing.B) { injectRate(b, 0) })
	b.Run("150k/s", func(b *testing.B) { injectRate(b, 150_000) })
}

func injectRate(b *testing.B, perSecond int) {
	stats, err := cebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
	if err != nil {
		b.Fatal(err)
	}
	defer stats.Close()
	tr, err := Open(Options{MSRs: []uint32{0x774}})
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var read sync.WaitGroup
	read.Add(1)
	var runErr error
	go func() {
		defer read.Done()
		runErr = tr.Run(ctx, func(*Event) error { return nil })
	}()
	workers := 2
	if perSecond > 0 {
		workers = 1
	}
	var next atomic.Int64
	start := time.Now()
	b.ResetTimer()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				if perSecond > 0 && i%1000 == 0 {
					// Pace in bursts of 1,000.
					time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(perSecond))))
				}
				if err := tr.Inject(-1, 0x774, 0x80002e17, false); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	cancel()
	read.Wait()
	if runErr != nil {
		b.Fatal(runErr)
	}
	st, err := tr.Stats()
	if err != nil {
		b.Fatal(err)
	}
	if st.Matched != uint64(b.N) || st.Delivered+st.Lost != st.Matched {
		b.Fatalf("stats %+v after %d injected", st, b.N)
	}
	ps, err := tr.objs.TestWriteMsr.Stats()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(st.Matched)/elapsed.Seconds(), "injected/s")
	b.ReportMetric(float64(st.Delivered)/elapsed.Seconds(), "delivered/s")
	b.ReportMetric(float64(st.Lost), "lost")
	if ps.RunCount > 0 {
		b.ReportMetric(float64(ps.Runtime.Nanoseconds())/float64(ps.RunCount), "kernel-ns/event")
	}
}
