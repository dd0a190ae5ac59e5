// SPDX-License-Identifier: Apache-2.0

package closedloop

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hwpprobe/hwpprobe/internal/emu/emuloop"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cgroup"
)

// TestPlace checks the busy accounting of docs/emulator.md ("Closed
// loop") on four emulated CPUs, reference 4000 MHz: one host CPU fully
// used is one CPU at 4000 MHz, so work w on a CPU at f keeps it busy
// w x 4000 / f.
func TestPlace(t *testing.T) {
	full := []float64{4000, 4000, 4000, 4000}
	for _, tc := range []struct {
		name     string
		procs    []Proc
		rest     float64
		freqs    []float64
		wantBusy []float64
		wantLive []bool
	}{
		{"2 busy processes: 2 busy CPUs", []Proc{{Use: 1, Runnable: 1}, {Use: 1, Runnable: 1}}, 0, full,
			[]float64{1, 1, 0, 0}, []bool{true, true, false, false}},
		{"2 busy threads of one process: 2 CPUs", []Proc{{Use: 1.6, Runnable: 2}}, 0, full,
			[]float64{0.8, 0.8, 0, 0}, []bool{true, true, false, false}},
		{"one task moved between threads: 1 CPU", []Proc{{Use: 0.5, Runnable: 1}}, 0, full,
			[]float64{0.5, 0, 0, 0}, []bool{true, false, false, false}},
		{"busiest first; idle processes take no CPU", []Proc{{Use: 0.2, Runnable: 0}, {}, {Use: 0.9, Runnable: 1}}, 0, full,
			[]float64{0.9, 0.2, 0, 0}, []bool{true, true, false, false}},
		{"half frequency: the same work, twice as busy", []Proc{{Use: 0.25, Runnable: 1}}, 0, []float64{2000, 4000, 4000, 4000},
			[]float64{0.5, 0, 0, 0}, []bool{true, false, false, false}},
		{"busy at most 1", []Proc{{Use: 0.9, Runnable: 1}}, 0, []float64{400, 4000, 4000, 4000},
			[]float64{1, 0, 0, 0}, []bool{true, false, false, false}},
		{"more processes than CPUs share them", []Proc{{Use: .3, Runnable: 1}, {Use: .3, Runnable: 1}, {Use: .2, Runnable: 1}, {Use: .2, Runnable: 1}, {Use: .1, Runnable: 1}, {Use: .1, Runnable: 1}}, 0, full,
			[]float64{0.4, 0.4, 0.2, 0.2}, []bool{true, true, true, true}},
		{"ended work fills the room from the first CPU", []Proc{{Use: 0.5, Runnable: 1}}, 1.2, full,
			[]float64{1, 0.7, 0, 0}, []bool{true, false, false, false}},
		{"ended work beyond every CPU is dropped", nil, 9, []float64{4000, 2000, 4000, 4000},
			[]float64{1, 1, 1, 1}, []bool{false, false, false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			busy, live := Place(tc.procs, tc.rest, tc.freqs, 4000)
			if d := cmp.Diff(tc.wantBusy, busy, cmpopts.EquateApprox(0, 1e-9)); d != "" {
				t.Errorf("busy (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantLive, live); d != "" {
				t.Errorf("live (-want +got):\n%s", d)
			}
		})
	}
}

// TestQuota: quota = min(host CPUs, max(f[0]/ref, Σ min(1, h x busy) x
// f/ref)), h = 2 on a CPU a live process is on.
func TestQuota(t *testing.T) {
	for _, tc := range []struct {
		name  string
		busy  []float64
		live  []bool
		freqs []float64
		host  int
		want  float64
	}{
		{"one CPU-bound task at the reference", []float64{1, 0}, []bool{true, false}, []float64{4000, 4000}, 8, 1},
		{"one CPU-bound task at 400 MHz", []float64{1, 0}, []bool{true, false}, []float64{400, 4000}, 8, 0.1},
		{"half busy: room to double", []float64{0.5, 0}, []bool{true, false}, []float64{2000, 4000}, 8, 0.5},
		{"a quarter busy, above the floor", []float64{0, 0.25}, []bool{false, true}, []float64{1000, 4000}, 8, 0.5},
		{"ended work gets no room", []float64{0, 0.5}, []bool{false, false}, []float64{400, 4000}, 8, 0.5},
		{"idle: the first CPU's capacity", []float64{0, 0}, []bool{false, false}, []float64{2000, 4000}, 8, 0.5},
		{"capped by the host", []float64{1, 1, 1, 1}, []bool{true, true, true, true}, []float64{4000, 4000, 4000, 4000}, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Quota(tc.busy, tc.live, tc.freqs, 4000, tc.host); !cmp.Equal(got, tc.want, cmpopts.EquateApprox(0, 1e-9)) {
				t.Errorf("Quota = %g, want %g", got, tc.want)
			}
		})
	}
}

// TestInfoParses: the loop file Info writes is what internal/emu/emuloop
// reads, with the groups hwpprobe moves itself and its workloads to.
func TestInfoParses(t *testing.T) {
	g := &cgroup.Group{Dirs: []string{"/sys/fs/cgroup/cpu/hwpemu-7", "/sys/fs/cgroup/cpuacct/hwpemu-7"}}
	obs := &cgroup.Group{Dirs: []string{"/sys/fs/cgroup/cpu/user.slice", "/sys/fs/cgroup/cpuacct/user.slice"}}
	for _, o := range []*cgroup.Group{obs, nil} {
		l := &Loop{g: g, observer: o, ref: 27220.5, slowdown: 5.488, hostCPUs: 2, quota: 0.109}
		got, err := emuloop.Parse(l.Info())
		if err != nil {
			t.Fatalf("%q: %v", l.Info(), err)
		}
		if !got.Closed || cmp.Diff(g, got.Group) != "" || cmp.Diff(o, got.Observer) != "" || got.Get("ref_mhz") != "27220.5" || got.Get("slowdown") != "5.488" {
			t.Errorf("%q parses as %+v", l.Info(), got)
		}
	}
	if got, err := emuloop.Parse(OpenInfo("--open-loop")); err != nil || got.Closed || got.State() != "open (--open-loop)" {
		t.Errorf("%q parses as %+v, %v", OpenInfo("--open-loop"), got, err)
	}
}
