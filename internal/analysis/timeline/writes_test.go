// SPDX-License-Identifier: Apache-2.0

package timeline

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/machine/snapshot"
	"github.com/hwpprobe/hwpprobe/internal/synth"
)

// TestWrites checks the write markers of a synthetic run whose snapshot
// holds cpu0's HWP_REQUEST and the package's power limit: a kernel write
// takes its old value from the snapshot, an emulated one its own, a
// write of MSR_PKG_POWER_LIMIT adds a power limit step, and writes past
// MaxWrites are counted.
func TestWrites(t *testing.T) {
	tjmax, units := 110, snapshot.Hex(0xa0e03)
	snap := &snapshot.Snapshot{
		Groups: []snapshot.Group{{CoreType: "P-core", CPUs: []snapshot.CPU{{CPU: 0, Registers: snapshot.CPURegs{
			HWPRequest: &snapshot.HWPRequest{Raw: 0x40003e05}}}}}},
		Packages: []snapshot.Package{{TjMaxC: &tjmax, RAPLUnits: &snapshot.RAPLUnits{Raw: units},
			PowerLimit: &snapshot.PowerLimit{Raw: 0x81c800008078, PL1W: 15, PL2W: 57}}},
	}
	at := func(s float64) int64 { return synth.Start + int64(s*1e9) }
	trace := []recording.TraceEvent{
		{TimeNs: at(0.5), CPU: 0, PID: 77, Comm: "sh", MSR: 0x774, Value: 0x3e3e},
		{TimeNs: at(0.6), CPU: 4, PID: 78, Comm: "echo", MSR: 0x774, Value: 0x00002604, Emulated: true, Old: 0x40002604},
		{TimeNs: at(0.7), CPU: 1, PID: 79, Comm: "sh", MSR: 0x610, Value: 0x81c800008050, Emulated: true, Old: 0x81c800008078},
	}
	path := filepath.Join(t.TempDir(), "w.hwpr")
	writeSpec(t, path, spec{cpus: 14, seconds: 3, snapshot: snap, trace: trace})
	run := build(t, path, Options{MaxWrites: 2}).Runs[0]
	if run.TjMaxC == nil || *run.TjMaxC != 110 {
		t.Errorf("TjMax %v, want 110", run.TjMaxC)
	}
	pl := func(v float64) *float64 { return &v }
	wantPL := []PowerLimit{{T: 0, PL1W: pl(15), PL2W: pl(57), Source: "snapshot"}, {T: 0.7, PL1W: pl(10), PL2W: pl(57), Source: "write"}}
	if diff := cmp.Diff(wantPL, run.PowerLimits); diff != "" {
		t.Errorf("power limits (-want +got):\n%s", diff)
	}
	if len(run.Writes) != 2 || run.WritesDropped != 1 || run.WritesLost != 2 {
		t.Fatalf("%d writes, %d dropped, %d lost: %+v", len(run.Writes), run.WritesDropped, run.WritesLost, run.Writes)
	}
	got := run.Writes[0]
	if got.T != 0.5 || got.CPU != 0 || got.CoreType != "P" || got.Register != "IA32_HWP_REQUEST" || got.Comm != "sh" || got.PID != 77 ||
		got.Old != "0x40003e05" || got.New != "0x3e3e" || got.Emulated {
		t.Errorf("kernel write %+v", got)
	}
	changed := map[string][2]any{}
	for _, f := range got.Fields {
		if f.Changed {
			changed[f.Name] = [2]any{f.Old, f.New}
		}
	}
	want := map[string][2]any{"min": {uint64(5), uint64(62)}, "epp": {uint64(64), uint64(0)}}
	if diff := cmp.Diff(want, changed); diff != "" {
		t.Errorf("changed fields (-want +got):\n%s\n%+v", diff, got.Fields)
	}
	if got := run.Writes[1]; got.Old != "0x40002604" || got.New != "0x2604" || !got.Emulated || got.Comm != "echo" || got.CoreType != "E" {
		t.Errorf("emulated write %+v", got)
	}
}
