// SPDX-License-Identifier: Apache-2.0

package tracefmt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/ebpf"
	"github.com/hwpprobe/hwpprobe/internal/machine/regs"
)

// Register values and their decodes are from ../../../shared/vectors/registers.tsv:
// Whiskey Lake i7-8565U "MSR_HWP_REQUEST: 0x80002e17 (min 23 max 46 des 0
// epp 0x80 window 0x0 pkg 0x0)", Granite Rapids under the performance
// governor "MSR_HWP_REQUEST: 0x00002727 (min 39 max 39 des 0 epp 0x0 window
// 0x0 pkg 0x0)", and the turbostat man page's "EPB: 6 (balanced)" (epb_name is
// the kernel's sysfs name for 6, "normal": arch/x86/kernel/cpu/intel_epb.c).
const (
	whiskeyLakeRequest = 0x80002e17
	graniteRapidsPerf  = 0x00002727
)

// cpuFrequency is the format of power:cpu_frequency on Linux 6.18
// (../testdata/cpu_frequency.format).
var cpuFrequency = &ebpf.Format{Group: "power", Name: "cpu_frequency", ID: 565, Fields: []ebpf.Field{
	{Name: "common_type", Type: "unsigned short", Offset: 0, Size: 2},
	{Name: "state", Type: "u32", Offset: 8, Size: 4},
	{Name: "cpu_id", Type: "u32", Offset: 12, Size: 4},
}}

func events() []ebpf.Event {
	tp := ebpf.Event{TimeNs: 5_000_000_000, CPU: 1, PID: 0, Comm: "swapper/1", Tracepoint: cpuFrequency}
	copy(tp.Raw[8:], []byte{0x00, 0x9f, 0x24, 0x00, 1, 0, 0, 0}) // state 2400000 (kHz), cpu_id 1
	return []ebpf.Event{
		{TimeNs: 1_000_000_000, CPU: 0, PID: 40, Comm: "kworker/0:1", MSR: 0x774, Value: whiskeyLakeRequest},
		{TimeNs: 1_500_000_000, CPU: 1, PID: 41, Comm: "kworker/1:1", MSR: 0x774, Value: whiskeyLakeRequest},
		{TimeNs: 2_000_001_000, CPU: 0, PID: 40, Comm: "kworker/0:1", MSR: 0x774, Value: graniteRapidsPerf},
		{TimeNs: 3_000_000_000, CPU: 0, PID: 40, Comm: "kworker/0:1", MSR: 0x774, Value: graniteRapidsPerf},
		{TimeNs: 4_000_000_000, CPU: 1, PID: 900, Comm: "tuned", MSR: 0x1b0, Value: 6, Failed: true},
		{TimeNs: 4_500_000_000, CPU: 1, PID: 0, Comm: "swapper/1", MSR: 0x6e0, Value: 0x24f83640b73},
		tp,
	}
}

func write(t *testing.T, jsonLines bool) string {
	t.Helper()
	var b bytes.Buffer
	w := New(&b, jsonLines)
	evs := events()
	for i := range evs {
		if err := w.Event(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	st := ebpf.Stats{Seen: 100, Matched: 6, TracepointHits: 1, Delivered: 7}
	if err := w.WriteSummary(w.Summary(st, 5*time.Second, false, nil)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestText(t *testing.T) {
	want := `1.000000 cpu0 kworker/0:1 IA32_HWP_REQUEST 0x80002e17 min 23 max 46 des 0 epp 0x80 window 0x0 pkg 0x0
1.500000 cpu1 kworker/1:1 IA32_HWP_REQUEST 0x80002e17 min 23 max 46 des 0 epp 0x80 window 0x0 pkg 0x0
2.000001 cpu0 kworker/0:1 IA32_HWP_REQUEST 0x2727 min 39 max 39 des 0 epp 0x0 window 0x0 pkg 0x0 (min 23 -> 39, max 46 -> 39, epp 128 -> 0)
3.000000 cpu0 kworker/0:1 IA32_HWP_REQUEST 0x2727 min 39 max 39 des 0 epp 0x0 window 0x0 pkg 0x0
4.000000 cpu1 tuned IA32_ENERGY_PERF_BIAS 0x6 balanced #GP
4.500000 cpu1 swapper/1 MSR_0x6e0 0x24f83640b73
5.000000 cpu1 swapper/1 power:cpu_frequency state=2400000 cpu_id=1

summary: 5.000 s
register                 msr         cpu   writes failed  last
IA32_ENERGY_PERF_BIAS    0x1b0         1        1      1  0x6
IA32_HWP_REQUEST         0x774         0        3      0  0x2727
IA32_HWP_REQUEST         0x774         1        1      0  0x80002e17
MSR_0x6e0                0x6e0         1        1      0  0x24f83640b73
power:cpu_frequency                        1 events
msr:write_msr: 100 hits, 6 matched the filter; events: 7 delivered, 0 lost (ring buffer full), 0 missed (another BPF program was running)
`
	if diff := cmp.Diff(want, write(t, false)); diff != "" {
		t.Errorf("text output (-want +got):\n%s", diff)
	}
}

func TestJSON(t *testing.T) {
	lines := strings.Split(strings.TrimSpace(write(t, true)), "\n")
	var got []map[string]any
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		got = append(got, m)
	}
	hwpFields := func(min, max, epp, valid float64) map[string]any {
		return map[string]any{"min": min, "max": max, "desired": 0.0, "epp": epp, "activity_window": 0.0,
			"activity_window_us": 0.0, "package_control": 0.0, "valid_bits": valid}
	}
	want := []map[string]any{
		{"time_ns": 1e9, "cpu": 0.0, "pid": 40.0, "comm": "kworker/0:1", "msr": "0x774", "value": "0x80002e17", "failed": false,
			"register": "IA32_HWP_REQUEST", "fields": hwpFields(23, 46, 128, 0)},
		{"time_ns": 1.5e9, "cpu": 1.0, "pid": 41.0, "comm": "kworker/1:1", "msr": "0x774", "value": "0x80002e17", "failed": false,
			"register": "IA32_HWP_REQUEST", "fields": hwpFields(23, 46, 128, 0)},
		{"time_ns": 2.000001e9, "cpu": 0.0, "pid": 40.0, "comm": "kworker/0:1", "msr": "0x774", "value": "0x2727", "failed": false,
			"register": "IA32_HWP_REQUEST", "fields": hwpFields(39, 39, 0, 0)},
		{"time_ns": 3e9, "cpu": 0.0, "pid": 40.0, "comm": "kworker/0:1", "msr": "0x774", "value": "0x2727", "failed": false,
			"register": "IA32_HWP_REQUEST", "fields": hwpFields(39, 39, 0, 0)},
		{"time_ns": 4e9, "cpu": 1.0, "pid": 900.0, "comm": "tuned", "msr": "0x1b0", "value": "0x6", "failed": true,
			"register": "IA32_ENERGY_PERF_BIAS", "fields": map[string]any{"epb": 6.0, "epb_name": "normal"}},
		{"time_ns": 4.5e9, "cpu": 1.0, "pid": 0.0, "comm": "swapper/1", "msr": "0x6e0", "value": "0x24f83640b73", "failed": false},
		{"time_ns": 5e9, "cpu": 1.0, "pid": 0.0, "comm": "swapper/1", "event": "power:cpu_frequency",
			"fields": map[string]any{"state": 2400000.0, "cpu_id": 1.0}},
		{"summary": map[string]any{
			"duration_ns": 5e9, "count_only": false,
			"registers": []any{
				map[string]any{"msr": "0x1b0", "register": "IA32_ENERGY_PERF_BIAS", "cpu": 1.0, "writes": 1.0, "failed": 1.0, "last": "0x6"},
				map[string]any{"msr": "0x774", "register": "IA32_HWP_REQUEST", "cpu": 0.0, "writes": 3.0, "failed": 0.0, "last": "0x2727"},
				map[string]any{"msr": "0x774", "register": "IA32_HWP_REQUEST", "cpu": 1.0, "writes": 1.0, "failed": 0.0, "last": "0x80002e17"},
				map[string]any{"msr": "0x6e0", "register": "MSR_0x6e0", "cpu": 1.0, "writes": 1.0, "failed": 0.0, "last": "0x24f83640b73"},
			},
			"tracepoints": map[string]any{"power:cpu_frequency": 1.0},
			"counters":    map[string]any{"seen": 100.0, "matched": 6.0, "tracepoint_hits": 1.0, "delivered": 7.0, "lost": 0.0, "missed": 0.0},
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("JSON lines (-want +got):\n%s", diff)
	}
}

func TestCountOnlySummary(t *testing.T) {
	var b bytes.Buffer
	w := New(&b, false)
	st := ebpf.Stats{Matched: 12}
	counts := []ebpf.MSRCount{{MSR: 0x774, CPU: 1, Writes: 2}, {MSR: 0x6e0, CPU: 0, Writes: 10}}
	if err := w.WriteSummary(w.Summary(st, time.Second, true, counts)); err != nil {
		t.Fatal(err)
	}
	want := `
summary: 1.000 s
register                 msr         cpu   writes failed  last
IA32_HWP_REQUEST         0x774         1        2      -  -
MSR_0x6e0                0x6e0         0       10      -  -
msr:write_msr: 12 matched the filter; count only: no events streamed, 0 missed (another BPF program was running)
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("count-only summary (-want +got):\n%s", diff)
	}
}

func TestParseMSRs(t *testing.T) {
	tests := []struct {
		in   string
		want []uint32
	}{
		{"0x6e0", []uint32{0x6e0}},
		{"6e0", []uint32{0x6e0}},
		{"HWP_REQUEST,EPB", []uint32{0x774, 0x1b0}},
		{"ia32_hwp_request, 0x774 ,MSR_HWP_REQUEST", []uint32{0x774}},
		{"MSR_AMD_CPPC_REQ,0xC00102B3", []uint32{0xc00102b3}},
	}
	for _, tt := range tests {
		got, err := ParseMSRs(tt.in)
		if err != nil {
			t.Errorf("ParseMSRs(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseMSRs(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
	for _, in := range []string{"", "HWP_REQEST", "0x", "0x1ffffffff", "0x774,", "0x7g4"} {
		_, err := ParseMSRs(in)
		if !errors.Is(err, ErrBadMSR) {
			t.Errorf("ParseMSRs(%q) = %v, want ErrBadMSR", in, err)
		}
	}
	if _, err := ParseMSRs("HWP_REQEST"); !errors.Is(err, regs.ErrUnknown) {
		t.Errorf("ParseMSRs(HWP_REQEST) = %v, want it to wrap regs.ErrUnknown", err)
	}
}

// The whole pipeline on the running kernel (root): a write injected into
// the eBPF program comes out decoded.
func TestKernelWriteDecoded(t *testing.T) {
	tr, err := ebpf.Open(ebpf.Options{MSRs: []uint32{0x774}})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if err := tr.Inject(-1, 0x774, whiskeyLakeRequest, false); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w := New(&b, false)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := tr.Run(ctx, w.Event); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	comm := os.Args[0][strings.LastIndexByte(os.Args[0], '/')+1:]
	if len(comm) > 15 {
		comm = comm[:15]
	}
	line := strings.TrimSpace(b.String())
	want := " " + comm + " IA32_HWP_REQUEST 0x80002e17 min 23 max 46 des 0 epp 0x80 window 0x0 pkg 0x0"
	if !strings.HasSuffix(line, want) || strings.Count(line, "\n") != 0 {
		t.Errorf("output %q, want one line ending in %q", line, want)
	}
}

// TestEmulated checks an emulated machine's writes: labelled with the old
// value and the writing process, changes taken from the old value (not
// from the kernel's write of the same register and CPU number, which is a
// host CPU), and summary rows of their own.
func TestEmulated(t *testing.T) {
	evs := []ebpf.Event{
		{TimeNs: 1_000_000_000, CPU: 0, PID: 40, Comm: "kworker/0:1", MSR: 0x774, Value: graniteRapidsPerf},
		{TimeNs: 2_000_000_000, CPU: 0, PID: 4242, Comm: "sh", MSR: 0x774, Value: graniteRapidsPerf,
			Emulated: true, Old: whiskeyLakeRequest},
	}
	wantText := `1.000000 cpu0 kworker/0:1 IA32_HWP_REQUEST 0x2727 min 39 max 39 des 0 epp 0x0 window 0x0 pkg 0x0
2.000000 cpu0 sh IA32_HWP_REQUEST 0x2727 min 39 max 39 des 0 epp 0x0 window 0x0 pkg 0x0 (min 23 -> 39, max 46 -> 39, epp 128 -> 0) [emulated, was 0x80002e17, pid 4242]

summary: 1.000 s
register                 msr         cpu   writes failed  last
IA32_HWP_REQUEST         0x774         0        1      0  0x2727
IA32_HWP_REQUEST         0x774         0        1      0  0x2727  emulated
msr:write_msr: 2 matched the filter; events: 2 delivered, 0 lost (ring buffer full); 1 of them emulated (hwpemu's model, not the kernel), 0 missed (another BPF program was running)
`
	for _, jsonLines := range []bool{false, true} {
		var b bytes.Buffer
		w := New(&b, jsonLines)
		for i := range evs {
			if err := w.Event(&evs[i]); err != nil {
				t.Fatal(err)
			}
		}
		st := ebpf.Stats{Matched: 2, Delivered: 2, Emulated: 1}
		if err := w.WriteSummary(w.Summary(st, time.Second, false, nil)); err != nil {
			t.Fatal(err)
		}
		if !jsonLines {
			if diff := cmp.Diff(wantText, b.String()); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
			continue
		}
		lines := strings.Split(strings.TrimSpace(b.String()), "\n")
		var ev struct {
			PID      int    `json:"pid"`
			Comm     string `json:"comm"`
			Emulated bool   `json:"emulated"`
			Old      string `json:"old"`
			Value    string `json:"value"`
			Register string `json:"register"`
		}
		if err := json.Unmarshal([]byte(lines[1]), &ev); err != nil {
			t.Fatal(err)
		}
		want := ev
		want.PID, want.Comm, want.Emulated, want.Old, want.Value, want.Register = 4242, "sh", true, "0x80002e17", "0x2727", "IA32_HWP_REQUEST"
		if diff := cmp.Diff(want, ev); diff != "" {
			t.Errorf("JSON (-want +got):\n%s", diff)
		}
		if strings.Contains(lines[0], "emulated") || strings.Contains(lines[0], `"old"`) {
			t.Errorf("kernel event carries emulated fields: %s", lines[0])
		}
		if !strings.Contains(lines[2], `"emulated":true`) {
			t.Errorf("summary has no emulated row: %s", lines[2])
		}
	}
}
