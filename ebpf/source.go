// SPDX-License-Identifier: Apache-2.0

package ebpf

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
)

// Source streams register writes: the eBPF Tracer (the kernel's writes,
// from msr:write_msr) and the EmulatedLog (the writes an emulated
// machine's model makes) both satisfy it, and Merge makes one Source of
// several. The methods mean what the Tracer's do.
type Source interface {
	// Run delivers events to fn until ctx is done, then what is left.
	Run(ctx context.Context, fn func(*Event) error) error
	// RunFlush is Run that calls flush whenever it has delivered all it has.
	RunFlush(ctx context.Context, fn func(*Event) error, flush func() error) error
	// Stats returns the counters so far.
	Stats() (Stats, error)
	// Counts returns the matched writes per MSR and CPU.
	Counts() ([]MSRCount, error)
	// Close releases the source.
	Close() error
}

var (
	_ Source = (*Tracer)(nil)
	_ Source = (*EmulatedLog)(nil)
)

// OpenSources opens the eBPF tracer with opts and, when root holds an
// emulated machine (its write log sysfs.EmulatedWrites exists: hwpemu),
// that machine's write log with the same filters, merged into one Source.
// The tracer keeps showing the real kernel's writes; the log's events are
// marked Emulated. An error opening either closes both.
func OpenSources(root string, opts Options) (Source, error) {
	tr, err := Open(opts)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(root, sysfs.EmulatedWrites)); err != nil {
		return tr, nil
	}
	el, err := OpenEmulated(root, opts)
	if err != nil {
		tr.Close()
		return nil, err
	}
	return Merge(tr, el), nil
}

// Merge returns a Source that runs srcs together: their events reach fn
// one at a time (fn is never called concurrently), in the order each
// source delivers them (not sorted by time across sources); Stats are
// summed, Counts joined. An error from one source stops the others.
func Merge(srcs ...Source) Source { return &merged{srcs: srcs} }

type merged struct{ srcs []Source }

func (m *merged) Run(ctx context.Context, fn func(*Event) error) error {
	return m.RunFlush(ctx, fn, nil)
}

func (m *merged) RunFlush(ctx context.Context, fn func(*Event) error, flush func() error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs = make([]error, len(m.srcs))
	)
	one := func(e *Event) error {
		mu.Lock()
		defer mu.Unlock()
		return fn(e)
	}
	var fl func() error
	if flush != nil {
		fl = func() error {
			mu.Lock()
			defer mu.Unlock()
			return flush()
		}
	}
	for i, s := range m.srcs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = s.RunFlush(ctx, one, fl); errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (m *merged) Stats() (Stats, error) {
	var sum Stats
	for _, s := range m.srcs {
		st, err := s.Stats()
		if err != nil {
			return sum, err
		}
		sum.Seen += st.Seen
		sum.Matched += st.Matched
		sum.TracepointHits += st.TracepointHits
		sum.Lost += st.Lost
		sum.Missed += st.Missed
		sum.Delivered += st.Delivered
		sum.Emulated += st.Emulated
	}
	return sum, nil
}

func (m *merged) Counts() ([]MSRCount, error) {
	var out []MSRCount
	for _, s := range m.srcs {
		c, err := s.Counts()
		if err != nil {
			return nil, err
		}
		out = append(out, c...)
	}
	return out, nil
}

func (m *merged) Close() error {
	var errs []error
	for _, s := range m.srcs {
		errs = append(errs, s.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("ebpf: close sources: %w", err)
	}
	return nil
}
