// SPDX-License-Identifier: Apache-2.0

package ebpf

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
)

// fakeLog makes a root whose write log holds lines, and returns the
// function that appends more.
func fakeLog(t *testing.T, lines ...string) (root string, add func(...string)) {
	t.Helper()
	root = t.TempDir()
	p := filepath.Join(root, sysfs.EmulatedWrites)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	var all []string
	add = func(more ...string) {
		all = append(all, more...)
		b := []byte{}
		for _, l := range all {
			b = append(b, l+"\n"...)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	add(lines...)
	return root, add
}

// drain runs src with a context that is already done: one read, then
// what it has.
func drain(t *testing.T, src Source) []Event {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var got []Event
	if err := src.Run(ctx, func(e *Event) error { got = append(got, *e); return nil }); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestEmulatedLog checks that only writes made after Open are delivered,
// filtered by MSR and CPU, with their old value, writer and the Emulated
// mark, and that a gap in the sequence numbers counts as lost.
func TestEmulatedLog(t *testing.T) {
	root, add := fakeLog(t, "1 100 0 0x774 0x40003e05 0xff003e05 10 sh")
	l, err := OpenEmulated(root, Options{MSRs: []uint32{0x774, 0x199}, CPUs: []int{0, 1}, CountSeen: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	add("2 200 0 0x199 0x1100 0x3e00 4242 my comm",
		"3 300 0 0x774 0xff003e05 0x3e3e 4242 my comm",
		"4 310 4 0x774 0x1 0x2 4242 sh", // CPU filtered
		"7 400 1 0x1b0 0x6 0xf 77 -",    // MSR filtered; 5 and 6 lost
		"8 500 1 0x774 0x5 0x6 0 -")
	want := []Event{
		{TimeNs: 200, CPU: 0, PID: 4242, Comm: "my comm", MSR: 0x199, Old: 0x1100, Value: 0x3e00, Emulated: true},
		{TimeNs: 300, CPU: 0, PID: 4242, Comm: "my comm", MSR: 0x774, Old: 0xff003e05, Value: 0x3e3e, Emulated: true},
		{TimeNs: 500, CPU: 1, MSR: 0x774, Old: 5, Value: 6, Emulated: true},
	}
	if diff := cmp.Diff(want, drain(t, l)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	st, err := l.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Stats{Seen: 5, Matched: 3, Lost: 2, Delivered: 3, Emulated: 3}, st); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	counts, err := l.Counts()
	if err != nil {
		t.Fatal(err)
	}
	wantCounts := []MSRCount{{MSR: 0x774, CPU: 0, Writes: 1, Emulated: true}, {MSR: 0x774, CPU: 1, Writes: 1, Emulated: true},
		{MSR: 0x199, CPU: 0, Writes: 1, Emulated: true}}
	if diff := cmp.Diff(wantCounts, counts); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if got := drain(t, l); len(got) != 0 {
		t.Errorf("second read delivered %d events again", len(got))
	}
}

func TestEmulatedLogCountOnly(t *testing.T) {
	root, add := fakeLog(t)
	l, err := OpenEmulated(root, Options{MSRs: []uint32{0x1b0}, CountOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	add("1 1 3 0x1b0 0x6 0xf 1 sh", "2 2 3 0x1b0 0xf 0x6 1 sh")
	if got := drain(t, l); len(got) != 0 {
		t.Errorf("count-only delivered %v", got)
	}
	st, _ := l.Stats()
	counts, _ := l.Counts()
	if st.Matched != 2 || st.Delivered != 0 || st.Emulated != 2 || len(counts) != 1 || counts[0].Writes != 2 {
		t.Errorf("stats %+v counts %+v", st, counts)
	}
}

func TestEmulatedLogErrors(t *testing.T) {
	if _, err := OpenEmulated(t.TempDir(), Options{MSRs: []uint32{0x774}}); !errors.Is(err, ErrNotEmulated) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no log: %v, want ErrNotEmulated and ErrNotExist", err)
	}
	for _, line := range []string{
		"1 2 3 0x774 0x1 0x2 4",         // no comm
		"x 2 3 0x774 0x1 0x2 4 sh",      // seq
		"1 2 3 774 0x1 0x2 4 sh",        // hex without 0x is decimal: fine
		"1 2 3 0x774 0xzz 0x2 4 sh",     // old
		"1 2 99999999999 0x774 1 2 3 a", // cpu
	} {
		root, _ := fakeLog(t, line)
		_, err := OpenEmulated(root, Options{MSRs: []uint32{0x774}})
		if line == "1 2 3 774 0x1 0x2 4 sh" {
			if err != nil {
				t.Errorf("%q: %v", line, err)
			}
			continue
		}
		if !errors.Is(err, ErrBadLog) {
			t.Errorf("%q: %v, want ErrBadLog", line, err)
		}
	}
	root, _ := fakeLog(t)
	l, err := OpenEmulated(root, Options{MSRs: []uint32{0x774}})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if err := l.Run(context.Background(), func(*Event) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Errorf("Run after Close: %v", err)
	}
}

// TestMerge runs two logs as one Source: every event of both, stats
// summed, counts joined, an error of fn stops both.
func TestMerge(t *testing.T) {
	r1, add1 := fakeLog(t)
	r2, add2 := fakeLog(t)
	opts := Options{MSRs: []uint32{0x774}}
	l1, err := OpenEmulated(r1, opts)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := OpenEmulated(r2, opts)
	if err != nil {
		t.Fatal(err)
	}
	m := Merge(l1, l2)
	defer m.Close()
	add1("1 10 0 0x774 0x0 0x1 1 a", "2 20 1 0x774 0x1 0x2 1 a")
	add2("1 15 5 0x774 0x0 0x3 2 b")
	got := drain(t, m)
	var times []uint64
	for _, e := range got {
		times = append(times, e.TimeNs)
	}
	slices.Sort(times)
	if diff := cmp.Diff([]uint64{10, 15, 20}, times); diff != "" {
		t.Errorf("event times (-want +got):\n%s", diff)
	}
	st, err := m.Stats()
	if err != nil {
		t.Fatal(err)
	}
	counts, err := m.Counts()
	if err != nil {
		t.Fatal(err)
	}
	if st.Delivered != 3 || st.Matched != 3 || len(counts) != 3 {
		t.Errorf("stats %+v, counts %+v", st, counts)
	}
	add1("3 30 0 0x774 0x2 0x3 1 a")
	stop := errors.New("stop")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Run(ctx, func(*Event) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("Run with failing fn: %v", err)
	}
}
