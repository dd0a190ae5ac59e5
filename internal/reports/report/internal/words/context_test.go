// SPDX-License-Identifier: Apache-2.0

package words

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
)

func fact(v string) recording.Fact { return recording.Fact{Value: v} }
func gone(m string) recording.Fact { return recording.Fact{Missing: m} }

// laptop is a context with every fact read.
var laptop = &recording.Context{Hwpprobe: "v1.2",
	Daemons: recording.DaemonList{Found: []recording.DaemonState{
		{Name: "tuned", PID: 900, Unit: "tuned.service", UnitState: "active", Mode: &recording.DaemonMode{What: "profile", Fact: fact("balanced")}},
		{Name: "thermald", PID: 812, Unit: "thermald.service", UnitState: "active", Mode: &recording.DaemonMode{What: "options", Fact: fact("--adaptive")}},
		{Name: "tlp", Unit: "tlp.service", UnitState: "active"},
	}},
	PlatformProfile: fact("balanced"), PlatformProfileChoices: fact("low-power balanced performance"),
	PowerSupply: recording.PowerSupply{Supplies: []recording.Supply{
		{Name: "AC", Type: "Mains", Online: &recording.Fact{Value: "1"}},
		{Name: "BAT0", Type: "Battery", Present: &recording.Fact{Value: "1"}},
		{Name: "USBC", Type: "USB", Online: &recording.Fact{Value: "0"}},
		{Name: "BAT1", Type: "Battery", Present: &recording.Fact{Missing: "not present"}},
	}},
	DMI:           recording.DMI{Vendor: fact("LENOVO"), Product: fact("21HD"), BIOSVersion: fact("N3XET43W"), BIOSDate: fact("05/12/2023")},
	KernelRelease: fact("6.8.0"), KernelCmdline: fact("ro quiet"), Microcode: fact("0x1f")}

// bare is a context with nothing read but the kernel's files.
var bare = &recording.Context{Hwpprobe: "v1.2",
	Daemons:         recording.DaemonList{ProcessesMissing: "not present", UnitsMissing: "not present"},
	PlatformProfile: gone("not present"), PlatformProfileChoices: gone("not present"),
	PowerSupply:   recording.PowerSupply{Supplies: []recording.Supply{}},
	DMI:           recording.DMI{Vendor: fact("QEMU"), Product: gone("empty"), BIOSVersion: gone("not present"), BIOSDate: gone("not present")},
	KernelRelease: fact("6.18"), KernelCmdline: gone("permission denied"), Microcode: gone("not in /proc/cpuinfo; cpu0/microcode/version not present")}

func TestContextBlocks(t *testing.T) {
	laptopRows := []ContextRow{
		{"power daemons", "tuned (pid 900, tuned.service active): profile balanced; thermald (pid 812, thermald.service active): options --adaptive; tlp (no process, tlp.service active)"},
		{"platform profile", "balanced (choices: low-power balanced performance)"},
		{"power supply", "AC (Mains) online; BAT0 (Battery) present; USBC (USB) offline; BAT1 (Battery) present missing (not present)"},
		{"firmware (DMI)", "vendor LENOVO, product 21HD, BIOS N3XET43W of 05/12/2023"},
		{"kernel", "6.8.0"}, {"kernel command line", "ro quiet"}, {"microcode", "0x1f"}, {"hwpprobe", "v1.2"},
	}
	bareRows := []ContextRow{
		{"power daemons", "none found; processes not read (not present); systemd units not read (not present)"},
		{"platform profile", "missing (not present)"},
		{"power supply", "none"},
		{"firmware (DMI)", "vendor QEMU, product missing (empty), BIOS missing (not present) of missing (not present)"},
		{"kernel", "6.18"}, {"kernel command line", "missing (permission denied)"},
		{"microcode", "missing (not in /proc/cpuinfo; cpu0/microcode/version not present)"}, {"hwpprobe", "v1.2"},
	}
	emulated := &recording.Context{Hwpprobe: "v2", Daemons: recording.DaemonList{UnitsMissing: "not read: emulated machine"},
		PlatformProfile: gone("not read: emulated machine"), PlatformProfileChoices: gone("not read: emulated machine"),
		PowerSupply: recording.PowerSupply{Missing: "not read: emulated machine"},
		DMI: recording.DMI{Vendor: gone("not read: emulated machine"), Product: gone("not read: emulated machine"),
			BIOSVersion: gone("not read: emulated machine"), BIOSDate: gone("not read: emulated machine")},
		KernelRelease: fact("6.18"), KernelCmdline: fact("quiet"), Microcode: fact("0x1f"),
		Emulator: &recording.Emulator{Variant: fact("min-pins"), Loop: fact("closed, slowdown 5.488")}}
	// An emulated recording whose tree lacked the files (a hwpemu that
	// served none).
	oldEmu := *emulated
	oldEmu.Emulator = &recording.Emulator{Variant: gone("not present"), Loop: gone("not present")}
	// emulatedRows are the rows of emulated's context with hwpemu's rows.
	emulatedRows := func(hwpemu ...ContextRow) []ContextRow {
		rows := []ContextRow{
			{"power daemons", "none found; systemd units not read (not read: emulated machine)"},
			{"platform profile", "missing (not read: emulated machine)"},
			{"power supply", "missing (not read: emulated machine)"},
			{"firmware (DMI)", "missing (not read: emulated machine)"},
			{"kernel", "6.18"}, {"kernel command line", "quiet"}, {"microcode", "0x1f"},
		}
		return append(append(rows, hwpemu...), ContextRow{"hwpprobe", "v2"})
	}
	notRecorded := []ContextRow{{"context", "not recorded (the file was written by an hwpprobe that did not record it)"}}
	tests := []struct {
		name    string
		sources []string
		ctxs    []*recording.Context
		want    []ContextBlock
	}{
		{"one experiment", []string{"exp.hwpr"}, []*recording.Context{laptop}, []ContextBlock{{Rows: laptopRows}}},
		{"nothing read", []string{"exp.hwpr"}, []*recording.Context{bare}, []ContextBlock{{Rows: bareRows}}},
		{"two recordings alike", []string{"a.hwpr", "b.hwpr"}, []*recording.Context{laptop, laptop}, []ContextBlock{{Rows: laptopRows}}},
		{"two recordings apart", []string{"a.hwpr", "b.hwpr"}, []*recording.Context{laptop, bare},
			[]ContextBlock{{Source: "a.hwpr", Rows: laptopRows}, {Source: "b.hwpr", Rows: bareRows}}},
		{"a file without one", []string{"old.hwpr"}, []*recording.Context{nil}, []ContextBlock{{Rows: notRecorded}}},
		{"one with, one without", []string{"a.hwpr", "old.hwpr"}, []*recording.Context{laptop, nil},
			[]ContextBlock{{Source: "a.hwpr", Rows: laptopRows}, {Source: "old.hwpr", Rows: notRecorded}}},
		{"emulated", []string{"e.hwpr"}, []*recording.Context{emulated}, []ContextBlock{{Rows: emulatedRows(
			ContextRow{"hwpemu model variant", "min-pins"}, ContextRow{"hwpemu loop", "closed, slowdown 5.488"})}}},
		{"emulated without the files", []string{"e.hwpr"}, []*recording.Context{&oldEmu}, []ContextBlock{{Rows: emulatedRows(
			ContextRow{"hwpemu model variant", "missing (not present)"}, ContextRow{"hwpemu loop", "missing (not present)"})}}},
		{"no sources", nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, ContextBlocks(tt.sources, tt.ctxs)); d != "" {
				t.Errorf("ContextBlocks (-want +got):\n%s", d)
			}
		})
	}
}
