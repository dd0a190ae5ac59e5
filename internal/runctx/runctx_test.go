// SPDX-License-Identifier: Apache-2.0

package runctx

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
)

// process is a fixture /proc/PID: its comm, stat and cmdline.
func process(pid, comm, cmdline string) map[string]string {
	return map[string]string{
		"proc/" + pid + "/comm":    comm + "\n",
		"proc/" + pid + "/stat":    pid + " (" + comm + ") S 1 1 1\n",
		"proc/" + pid + "/cmdline": cmdline,
	}
}

// tree writes files (path: content; a path ending in "/" is a directory)
// under a new root.
func tree(t *testing.T, parts ...map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for _, files := range parts {
		for p, data := range files {
			full := filepath.Join(root, p)
			if strings.HasSuffix(p, "/") {
				if err := os.MkdirAll(full, 0o755); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

func val(s string) recording.Fact          { return recording.Fact{Value: s} }
func missing(s string) recording.Fact      { return recording.Fact{Missing: s} }
func ptr(f recording.Fact) *recording.Fact { return &f }

var absent = missing("not present")

// laptop is a machine with every fact present: three daemons running,
// one more (TLP, which has no resident process) active by its unit.
var laptop = map[string]string{
	"proc/sys/kernel/osrelease": "6.8.0-45-generic\n",
	"proc/cmdline":              "BOOT_IMAGE=/vmlinuz-6.8.0 root=UUID=1 ro quiet intel_pstate=active\n",
	"proc/cpuinfo":              "processor\t: 0\nvendor_id\t: GenuineIntel\nmicrocode\t: 0x1f\n\nprocessor\t: 1\nmicrocode\t: 0x1f\n",
	"run/systemd/units/invocation:thermald.service":             "",
	"run/systemd/units/invocation:tlp.service":                  "",
	"run/systemd/units/invocation:systemd-journald.service":     "",
	"etc/tuned/active_profile":                                  "throughput-performance\n",
	"var/lib/power-profiles-daemon/state.ini":                   "[State]\nDriver=intel_pstate\nProfile=performance\n",
	"sys/firmware/acpi/platform_profile":                        "balanced\n",
	"sys/firmware/acpi/platform_profile_choices":                "low-power balanced performance\n",
	"sys/class/power_supply/AC/type":                            "Mains\n",
	"sys/class/power_supply/AC/online":                          "1\n",
	"sys/class/power_supply/BAT0/type":                          "Battery\n",
	"sys/class/power_supply/BAT0/present":                       "1\n",
	"sys/class/power_supply/ucsi-source-psy-USBC000:001/type":   "USB\n",
	"sys/class/power_supply/ucsi-source-psy-USBC000:001/online": "0\n",
	"sys/class/dmi/id/sys_vendor":                               "LENOVO\n",
	"sys/class/dmi/id/product_name":                             "21HD\n",
	"sys/class/dmi/id/bios_version":                             "N3XET43W (1.18 )\n",
	"sys/class/dmi/id/bios_date":                                "05/12/2023\n",
}

func TestRead(t *testing.T) {
	daemons := func(parts ...map[string]string) map[string]string {
		out := map[string]string{}
		for _, p := range parts {
			for k, v := range p {
				out[k] = v
			}
		}
		return out
	}(process("812", "thermald", "/usr/sbin/thermald\x00--systemd\x00--dbus-enable\x00--adaptive\x00"),
		process("900", "python3", "/usr/bin/python3\x00/usr/sbin/tuned\x00-l\x00-P\x00"),
		process("901", "power-profiles-", "/usr/libexec/power-profiles-daemon\x00"),
		process("1", "systemd", "/sbin/init\x00"))
	allAbsent := recording.DMI{Vendor: absent, Product: absent, BIOSVersion: absent, BIOSDate: absent}
	for _, tc := range []struct {
		name  string
		files []map[string]string
		want  recording.Context
		pids  []int // what Read returns as running
	}{{
		name:  "laptop with daemons",
		files: []map[string]string{laptop, daemons},
		pids:  []int{812, 900, 901}, // in /proc's order
		want: recording.Context{Hwpprobe: "v1",
			Daemons: recording.DaemonList{Found: []recording.DaemonState{
				{Name: "tuned", PID: 900, Unit: "tuned.service", UnitState: "inactive",
					Mode: &recording.DaemonMode{What: "profile", Fact: val("throughput-performance")}},
				{Name: "power-profiles-daemon", PID: 901, Unit: "power-profiles-daemon.service", UnitState: "inactive",
					Mode: &recording.DaemonMode{What: "profile", Fact: val("performance")}},
				{Name: "thermald", PID: 812, Unit: "thermald.service", UnitState: "active",
					Mode: &recording.DaemonMode{What: "options", Fact: val("--systemd --dbus-enable --adaptive")}},
				{Name: "tlp", Unit: "tlp.service", UnitState: "active"},
			}},
			PlatformProfile: val("balanced"), PlatformProfileChoices: val("low-power balanced performance"),
			PowerSupply: recording.PowerSupply{Supplies: []recording.Supply{
				{Name: "AC", Type: "Mains", Online: ptr(val("1"))},
				{Name: "BAT0", Type: "Battery", Present: ptr(val("1"))},
				{Name: "ucsi-source-psy-USBC000:001", Type: "USB", Online: ptr(val("0"))},
			}},
			DMI:           recording.DMI{Vendor: val("LENOVO"), Product: val("21HD"), BIOSVersion: val("N3XET43W (1.18 )"), BIOSDate: val("05/12/2023")},
			KernelRelease: val("6.8.0-45-generic"), KernelCmdline: val("BOOT_IMAGE=/vmlinuz-6.8.0 root=UUID=1 ro quiet intel_pstate=active"),
			Microcode: val("0x1f")},
	}, {
		name: "nothing readable",
		want: recording.Context{Hwpprobe: "v1",
			Daemons:         recording.DaemonList{ProcessesMissing: "not present", UnitsMissing: "not present"},
			PlatformProfile: absent, PlatformProfileChoices: absent, PowerSupply: recording.PowerSupply{Missing: "not present"},
			DMI: allAbsent, KernelRelease: absent, KernelCmdline: absent,
			Microcode: missing("not in /proc/cpuinfo; cpu0/microcode/version not present")},
	}, {
		// Files present but empty or unreadable, a /proc without
		// processes, systemd running none of the units, a desktop
		// without power supplies, the microcode only in sysfs.
		name: "empty and odd files",
		files: []map[string]string{{
			"proc/cpuinfo": "processor\t: 0\nvendor_id\t: AuthenticAMD\n", "proc/stat": "cpu 1 2 3\n",
			"sys/devices/system/cpu/cpu0/microcode/version": "0xa20120a\n",
			"run/systemd/units/invocation:dbus.service":     "",
			"proc/cmdline":                        "\n",
			"sys/firmware/acpi/platform_profile/": "", // a directory: unreadable as a file
			"sys/class/power_supply/":             "",
			"sys/class/dmi/id/sys_vendor":         "QEMU\n", "sys/class/dmi/id/product_name": "Standard PC (Q35 + ICH9, 2009)\n",
		}},
		want: recording.Context{Hwpprobe: "v1",
			Daemons:         recording.DaemonList{ProcessesMissing: "no process listed under proc"},
			PlatformProfile: missing("is a directory"), PlatformProfileChoices: absent,
			PowerSupply:   recording.PowerSupply{Supplies: []recording.Supply{}},
			DMI:           recording.DMI{Vendor: val("QEMU"), Product: val("Standard PC (Q35 + ICH9, 2009)"), BIOSVersion: absent, BIOSDate: absent},
			KernelRelease: absent, KernelCmdline: missing("empty"), Microcode: val("0xa20120a")},
	}, {
		// ppd's state without a profile, tuned's without one, thermald
		// without options; a battery whose present file is missing.
		name: "daemons without modes",
		files: []map[string]string{
			process("20", "thermald", "thermald\x00"), process("21", "tuned", "/usr/sbin/tuned\x00"),
			process("22", "power-profiles-", "/usr/libexec/power-profiles-daemon\x00"),
			process("23", "auto-cpufreq", "/usr/bin/auto-cpufreq\x00--daemon\x00"),
			{"etc/tuned/active_profile": "\n", "var/lib/power-profiles-daemon/state.ini": "[Other]\nProfile=power-saver\n",
				"sys/class/power_supply/BAT1/type": "Battery\n", "sys/class/power_supply/X/online": "1\n"},
		},
		pids: []int{20, 21, 22, 23},
		want: recording.Context{Hwpprobe: "v1",
			Daemons: recording.DaemonList{UnitsMissing: "not present", Found: []recording.DaemonState{
				{Name: "tuned", PID: 21, Unit: "tuned.service", Mode: &recording.DaemonMode{What: "profile", Fact: missing("empty")}},
				{Name: "power-profiles-daemon", PID: 22, Unit: "power-profiles-daemon.service",
					Mode: &recording.DaemonMode{What: "profile", Fact: missing("no Profile in state.ini's [State]")}},
				{Name: "thermald", PID: 20, Unit: "thermald.service", Mode: &recording.DaemonMode{What: "options", Fact: val("none")}},
				{Name: "auto-cpufreq", PID: 23, Unit: "auto-cpufreq.service"},
			}},
			PlatformProfile: absent, PlatformProfileChoices: absent,
			PowerSupply: recording.PowerSupply{Supplies: []recording.Supply{
				{Name: "BAT1", Type: "Battery", Present: ptr(absent)},
				{Name: "X", Type: "(type not present)"},
			}},
			DMI: allAbsent, KernelRelease: absent, KernelCmdline: absent,
			Microcode: missing("not in /proc/cpuinfo; cpu0/microcode/version not present")},
	}, {
		// Under an emulated machine the host's firmware, power supply
		// and units are not read even where the files exist.
		name: "emulated",
		files: []map[string]string{laptop, process("5", "thermald", "thermald\x00"), {sysfs.EmulatedMarker: "mtl-165u\n",
			sysfs.EmulatedVariant: "min-pins\n", sysfs.EmulatedLoop: "closed cgroup=v1:/sys/fs/cgroup/cpu/hwpemu-7 observer=v1:/sys/fs/cgroup/cpu/user.slice interval_ms=100 ref_mhz=27220 slowdown=5.488 host_cpus=2 quota_cpus=0.109\n"}},
		pids: []int{5},
		want: recording.Context{Hwpprobe: "v1",
			Daemons: recording.DaemonList{UnitsMissing: "not read under an emulated machine: the host's units do not write its settings",
				Found: []recording.DaemonState{{Name: "thermald", PID: 5, Unit: "thermald.service",
					Mode: &recording.DaemonMode{What: "options", Fact: val("none")}}}},
			PlatformProfile: missing(NotEmulated), PlatformProfileChoices: missing(NotEmulated),
			PowerSupply: recording.PowerSupply{Missing: NotEmulated},
			DMI: recording.DMI{Vendor: missing(NotEmulated), Product: missing(NotEmulated), BIOSVersion: missing(NotEmulated),
				BIOSDate: missing(NotEmulated)},
			KernelRelease: val("6.8.0-45-generic"), KernelCmdline: val("BOOT_IMAGE=/vmlinuz-6.8.0 root=UUID=1 ro quiet intel_pstate=active"),
			Microcode: val("0x1f"), Emulator: &recording.Emulator{Variant: val("min-pins"), Loop: val("closed, slowdown 5.488")}},
	}, {
		// An emulated tree without hwpemu's variant and loop files, and
		// one with a loop file that does not parse.
		name:  "emulated without variant",
		files: []map[string]string{{sysfs.EmulatedMarker: "mtl-165u\n", sysfs.EmulatedLoop: "ajar\n"}},
		want: recording.Context{Hwpprobe: "v1",
			Daemons:         recording.DaemonList{ProcessesMissing: "not present", UnitsMissing: "not read under an emulated machine: the host's units do not write its settings"},
			PlatformProfile: missing(NotEmulated), PlatformProfileChoices: missing(NotEmulated),
			PowerSupply: recording.PowerSupply{Missing: NotEmulated},
			DMI: recording.DMI{Vendor: missing(NotEmulated), Product: missing(NotEmulated), BIOSVersion: missing(NotEmulated),
				BIOSDate: missing(NotEmulated)},
			KernelRelease: absent, KernelCmdline: absent, Microcode: missing("not in /proc/cpuinfo; cpu0/microcode/version not present"),
			Emulator: &recording.Emulator{Variant: absent, Loop: missing(`sys/devices/system/cpu/hwpemu_loop: "ajar" is neither closed nor open`)}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, running := Read(sysfs.NewFS(tree(t, tc.files...)), "v1")
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Read (-want +got):\n%s", d)
			}
			var pids []int
			for _, r := range running {
				pids = append(pids, r.PID)
			}
			if d := cmp.Diff(tc.pids, pids); d != "" {
				t.Errorf("running (-want +got):\n%s", d)
			}
		})
	}
}
