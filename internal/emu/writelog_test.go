// SPDX-License-Identifier: Apache-2.0

package emu

import (
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/emu/vfs"
)

// writeAs stores s into the tree's file p as process by.
func writeAs(t *testing.T, m *Machine, by vfs.Caller, p, s string) error {
	t.Helper()
	n, ok := m.Tree().Walk(p)
	if !ok {
		t.Fatalf("%s: missing", p)
	}
	return n.(*vfs.File).Store(by, []byte(s))
}

// TestWriteLog checks the register writes a sysfs write makes on the
// emulated machines, as the kernel's drivers make them: intel_pstate's
// intel_pstate_set_policy() writes IA32_PERF_CTL (0x199) then
// intel_pstate_hwp_set() IA32_HWP_REQUEST (0x774) under performance;
// an EPP store writes HWP_REQUEST; intel_epb writes EPB (0x1b0);
// amd-pstate writes MSR_AMD_CPPC_REQ (0xc00102b3) only when the value
// changes. Nothing the driver wrote at start is logged (no reader could
// have seen it), a refused write logs nothing.
func TestWriteLog(t *testing.T) {
	const cpu = "sys/devices/system/cpu/"
	sh := vfs.Caller{PID: 4242, Comm: "sh"}
	tests := []struct {
		machine string
		writes  [][2]string // path, value
		want    []MSRWrite
	}{{
		machine: "mtl-165u",
		writes: [][2]string{
			{cpu + "cpufreq/policy0/energy_performance_preference", "power"},
			{cpu + "cpufreq/policy0/scaling_governor", "performance"},
			{cpu + "cpufreq/policy0/energy_performance_preference", "power"}, // EBUSY
			{cpu + "cpu4/power/energy_perf_bias", "15"},
		},
		want: []MSRWrite{
			{Seq: 1, CPU: 0, MSR: 0x774, Old: 0x40003e05, New: 0xff003e05},
			{Seq: 2, CPU: 0, MSR: 0x199, Old: 0x1100, New: 0x3e00},
			{Seq: 3, CPU: 0, MSR: 0x774, Old: 0xff003e05, New: 0x3e3e},
			{Seq: 4, CPU: 4, MSR: 0x1b0, Old: 6, New: 15},
		},
	}, {
		machine: "zen4-amd-pstate",
		writes: [][2]string{
			{cpu + "cpufreq/policy1/energy_performance_preference", "balance_performance"}, // unchanged
			{cpu + "cpufreq/policy1/scaling_governor", "performance"},
		},
		want: []MSRWrite{
			{Seq: 1, CPU: 1, MSR: 0xc00102b3 /* Old, New: below */},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.machine, func(t *testing.T) {
			m, _ := load(t, tt.machine, 0.5)
			ns := uint64(1000)
			m.writes.mono = func() uint64 { ns++; return ns }
			for _, w := range tt.writes {
				err := writeAs(t, m, sh, w[0], w[1])
				if err != nil && err != syscall.EBUSY {
					t.Fatalf("write %q to %s: %v", w[1], w[0], err)
				}
			}
			for i := range tt.want {
				tt.want[i].TimeNs = 1001 + uint64(i)
				tt.want[i].PID, tt.want[i].Comm = sh.PID, sh.Comm
			}
			if tt.machine == "zen4-amd-pstate" {
				tt.want[0].Old = msrBefore(t, tt.machine, 1, 0xc00102b3)
				tt.want[0].New = msr(t, m, 1, 0xc00102b3)
			}
			if diff := cmp.Diff(tt.want, m.MSRWrites()); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
			var lines []string
			for _, w := range tt.want {
				lines = append(lines, fmt.Sprintf("%d %d %d %#x %#x %#x 4242 sh", w.Seq, w.TimeNs, w.CPU, w.MSR, w.Old, w.New))
			}
			if diff := cmp.Diff(strings.Join(lines, "\n"), read(t, m, WriteLogPath)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", WriteLogPath, diff)
			}
		})
	}
}

// msrBefore is a register's value on a fresh machine.
func msrBefore(t *testing.T, name string, cpu int, addr uint32) uint64 {
	t.Helper()
	m, _ := load(t, name, 0.5)
	return msr(t, m, cpu, addr)
}

// TestWriteLogBounded checks that the log keeps the last WriteLogLen
// writes, numbered on (a reader sees the gap), and that a write through
// the plain Write function is logged with an unknown process.
func TestWriteLogBounded(t *testing.T) {
	m, _ := load(t, "mtl-165u", 0.5)
	const epb = "sys/devices/system/cpu/cpu0/power/energy_perf_bias"
	for i := range WriteLogLen + 5 {
		if err := write(m, epb, fmt.Sprint(i%16)); err != nil {
			t.Fatal(err)
		}
	}
	got := m.MSRWrites()
	if len(got) != WriteLogLen || got[0].Seq != 6 || got[len(got)-1].Seq != WriteLogLen+5 {
		t.Fatalf("%d writes, seq %d..%d; want %d, 6..%d", len(got), got[0].Seq, got[len(got)-1].Seq, WriteLogLen, WriteLogLen+5)
	}
	last := got[len(got)-1]
	if last.PID != 0 || last.Comm != "" || last.New != uint64((WriteLogLen+4)%16) {
		t.Errorf("last write %+v", last)
	}
	if !strings.HasSuffix(last.String(), " 0 -") {
		t.Errorf("line %q does not end with an unknown writer \" 0 -\"", last.String())
	}
}
