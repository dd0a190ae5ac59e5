// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hwpprobe/hwpprobe/ebpf"
	"github.com/hwpprobe/hwpprobe/ebpf/tracefmt"
)

// maxWriteSeries bounds the (register, comm, origin) series; writes beyond
// it are counted under comm "other".
const maxWriteSeries = 512

type writeKey struct {
	msr      uint32
	comm     string
	emulated bool
}

// writeCounter counts the traced register writes by register, command
// and origin, for the lifetime of the exporter.
type writeCounter struct {
	src ebpf.Source

	mu  sync.Mutex
	n   map[writeKey]uint64
	err error
}

func newWriteCounter(src ebpf.Source) *writeCounter {
	return &writeCounter{src: src, n: map[writeKey]uint64{}}
}

// event counts one delivered event (tracepoint hits other than MSR
// writes are not asked for and are ignored).
func (w *writeCounter) event(e *ebpf.Event) error {
	if e.Tracepoint != nil {
		return nil
	}
	k := writeKey{msr: e.MSR, comm: e.Comm, emulated: e.Emulated}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.n[k]; !ok && len(w.n) >= maxWriteSeries {
		k.comm = "other"
	}
	w.n[k]++
	return nil
}

// fail records that the tracer stopped.
func (w *writeCounter) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.err = err
}

// collect adds the write counters; it reports false when the tracer has
// stopped or its statistics cannot be read.
func (w *writeCounter) collect(b *builder) bool {
	st, err := w.src.Stats()
	if err == nil {
		b.add(descWritesLost, prometheus.CounterValue, float64(st.Lost))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, v := range w.n {
		origin := "kernel"
		if k.emulated {
			origin = "emulated"
		}
		b.add(descWrites, prometheus.CounterValue, float64(v), fmt.Sprintf("0x%x", k.msr), tracefmt.Name(k.msr), k.comm, origin)
	}
	return err == nil && w.err == nil
}
