// SPDX-License-Identifier: Apache-2.0

package sysfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPowercapID(t *testing.T) {
	tests := []struct {
		id, iface, parent string
		ok                bool
	}{
		{"intel-rapl:0", "intel-rapl", "", true},
		{"intel-rapl:1", "intel-rapl", "", true},
		{"intel-rapl:0:2", "intel-rapl", "intel-rapl:0", true},
		{"intel-rapl-mmio:0", "intel-rapl-mmio", "", true},
		{"intel-rapl-mmio:0:0", "intel-rapl-mmio", "intel-rapl-mmio:0", true},
		{"intel-rapl", "", "", false}, // the control type itself
		{"intel-rapl-mmio", "", "", false},
		{"dtpm", "", "", false},
		{"dtpm:0", "", "", false},
		{"amd-rapl:0", "", "", false}, // no kernel driver registers this name
		{"intel-rapl:0:0:0", "", "", false},
		{"intel-rapl:x", "", "", false},
		{"intel-rapl:", "", "", false},
	}
	for _, tt := range tests {
		iface, parent, ok := powercapID(tt.id)
		if iface != tt.iface || parent != tt.parent || ok != tt.ok {
			t.Errorf("powercapID(%q) = %q, %q, %v; want %q, %q, %v", tt.id, iface, parent, ok, tt.iface, tt.parent, tt.ok)
		}
	}
}

// TestEnergyZones builds the powercap tree of a one-package laptop as
// the kernel lays it out (package, its core and uncore sub-zones, psys,
// the MMIO copy of the package) and lists the zones with counters.
func TestEnergyZones(t *testing.T) {
	root := t.TempDir()
	zone := func(id, name, max string) {
		dir := filepath.Join(root, "sys/class/powercap", id)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		files := map[string]string{"name": name + "\n", "energy_uj": "12345\n"}
		if max != "" {
			files["max_energy_range_uj"] = max + "\n"
		}
		for f, v := range files {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(v), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	zone("intel-rapl:0", "package-0", "262143328850")
	zone("intel-rapl:0:0", "core", "262143328850")
	zone("intel-rapl:0:1", "uncore", "262143328850")
	zone("intel-rapl:1", "psys", "262143328850")
	zone("intel-rapl:0:2", "dram", "") // no range: unusable
	zone("intel-rapl-mmio:0", "package-0", "262143328850")
	if err := os.MkdirAll(filepath.Join(root, "sys/class/powercap/intel-rapl"), 0o755); err != nil {
		t.Fatal(err)
	}
	fs := NewFS(root)
	got, err := fs.EnergyZones()
	if err != nil {
		t.Fatal(err)
	}
	path := func(id string) string { return fs.Path("sys/class/powercap", id, "energy_uj") }
	want := []EnergyZone{
		{ID: "intel-rapl:0", Name: "package-0", EnergyUJ: path("intel-rapl:0"), MaxUJ: 262143328850},
		{ID: "intel-rapl:0:0", Name: "core", ParentName: "package-0", EnergyUJ: path("intel-rapl:0:0"), MaxUJ: 262143328850},
		{ID: "intel-rapl:0:1", Name: "uncore", ParentName: "package-0", EnergyUJ: path("intel-rapl:0:1"), MaxUJ: 262143328850},
		{ID: "intel-rapl:1", Name: "psys", EnergyUJ: path("intel-rapl:1"), MaxUJ: 262143328850},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("EnergyZones (-want +got):\n%s", d)
	}
	if z, err := NewFS(t.TempDir()).EnergyZones(); err != nil || len(z) != 0 {
		t.Errorf("no powercap: %v, %v; want none and no error", z, err)
	}
}
