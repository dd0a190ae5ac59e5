// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hwpprobe/hwpprobe/ebpf"
	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
)

// TestAccumulate: energy counters add watts x interval per domain, only
// for present domains; limit reasons count the interval when active and
// 0 for every other reason of the table.
func TestAccumulate(t *testing.T) {
	table, ok := hwp.CoreLimitTable(6, 0x3c) // Haswell
	if !ok {
		t.Fatal("no Haswell limit table")
	}
	st := newState(&sampler.Setup{Packages: []int{0}})
	st.table = &table
	first := table.Reasons[0]
	s := &sampler.Sample{Interval: 2 * time.Second, Packages: []sampler.Package{{
		PkgWatt:      sampler.Value{V: 10, Src: sampler.SrcMSR},
		RAMWatt:      sampler.Value{V: 1, Src: sampler.SrcMSR, Flags: sampler.FlagReadsZero},
		LimitReasons: sampler.Reg{Raw: 1 << first.Bit, Src: sampler.SrcMSR},
	}}}
	st.accumulate(s)
	st.accumulate(s)
	st.sample = *s
	b := &builder{}
	b.counters(&st)
	if len(b.ms) != 1+len(table.Reasons) {
		t.Errorf("%d counters, want the package energy and %d limit reasons", len(b.ms), len(table.Reasons))
	}
	if st.joules[0][0] != 40 || st.hasJoules[0][3] || st.hasJoules[0][1] {
		t.Errorf("joules %v (present %v), want package 40 J and no dram or core", st.joules[0], st.hasJoules[0])
	}
	if v := st.limits[limitKey{0, first.Name}]; v != 4 {
		t.Errorf("limit %s: %v s, want 4", first.Name, v)
	}
	if len(st.limits) != len(table.Reasons) {
		t.Errorf("%d limit reasons counted, want every one of the table's %d", len(st.limits), len(table.Reasons))
	}
}

// TestLimitTimeBits: without a table for the model the active bits are
// counted as bitN.
func TestLimitTimeBits(t *testing.T) {
	st := newState(&sampler.Setup{Packages: []int{0}})
	st.limitTime(0, 1<<10|1<<1|1<<20, 0.5)
	st.limitTime(0, 1<<10, 0.5)
	want := map[limitKey]float64{{0, "bit10"}: 1, {0, "bit1"}: 0.5}
	if diff := cmp.Diff(want, st.limits, cmp.AllowUnexported(limitKey{})); diff != "" {
		t.Errorf("limits (-want +got):\n%s", diff)
	}
}

// TestWriteCounter: writes are counted by register, command and origin;
// new series beyond the bound go to comm "other".
func TestWriteCounter(t *testing.T) {
	w := newWriteCounter(nil)
	w.event(&ebpf.Event{MSR: 0x774, Comm: "sh", Emulated: true})
	w.event(&ebpf.Event{MSR: 0x774, Comm: "sh", Emulated: true})
	w.event(&ebpf.Event{MSR: 0x774, Comm: "sh"})
	w.event(&ebpf.Event{Tracepoint: &ebpf.Format{}})
	want := map[writeKey]uint64{{0x774, "sh", true}: 2, {0x774, "sh", false}: 1}
	if diff := cmp.Diff(want, w.n, cmp.AllowUnexported(writeKey{})); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	for i := range maxWriteSeries + 10 {
		w.event(&ebpf.Event{MSR: 0x6e0, Comm: "c" + strings.Repeat("x", i)})
	}
	if len(w.n) != maxWriteSeries+1 || w.n[writeKey{0x6e0, "other", false}] == 0 {
		t.Errorf("%d series, other %d; want %d and some other", len(w.n), w.n[writeKey{0x6e0, "other", false}], maxWriteSeries+1)
	}
}

// TestWriteTextfile: the file holds the registry's metrics in the text
// format and replaces an older one.
func TestWriteTextfile(t *testing.T) {
	reg := prometheus.NewRegistry()
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "hwpprobe_test_value", Help: "A test value."})
	reg.MustRegister(g)
	path := filepath.Join(t.TempDir(), TextfileName)
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g.Set(3)
	if err := WriteTextfile(reg, path); err != nil {
		t.Fatal(err)
	}
	want := "# HELP hwpprobe_test_value A test value.\n# TYPE hwpprobe_test_value gauge\nhwpprobe_test_value 3\n"
	b, _ := os.ReadFile(path)
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("textfile (-want +got):\n%s", diff)
	}
	if err := WriteTextfile(reg, filepath.Join(t.TempDir(), "missing", TextfileName)); err == nil {
		t.Error("writing into a missing directory: no error")
	}
}
