// SPDX-License-Identifier: Apache-2.0

package topology

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/emu/emutest"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpuid"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
)

func TestDetectHybrid(t *testing.T) {
	root, m := emutest.Root(t, "mtl-165u")
	all, _ := cpus.Parse("0-13")
	want := []Group{{PCore, cpus.List{0, 1, 2, 3}}, {ECore, cpus.List{4, 5, 6, 7, 8, 9, 10, 11}}, {LPECore, cpus.List{12, 13}}}
	for _, tt := range []struct {
		name   string
		id     cpuid.Reader
		source Source
	}{{"cpuid", emutest.CPUID{M: m}, SourceCPUID}, {"sysfs", nil, SourceSysfs}} {
		topo, err := Detect(sysfs.NewFS(root), tt.id, all)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, topo.Groups()); diff != "" {
			t.Errorf("%s: groups (-want +got):\n%s", tt.name, diff)
		}
		if topo.Source != tt.source || !topo.Hybrid {
			t.Errorf("%s: source %q hybrid %v", tt.name, topo.Source, topo.Hybrid)
		}
		if c := topo.CPUs[3]; c.Core != 1 || !cmp.Equal(c.Siblings, cpus.List{2, 3}) {
			t.Errorf("%s: cpu3 core %d siblings %v, want core 1 siblings 2-3", tt.name, c.Core, c.Siblings)
		}
	}
}

// TestDetectThisMachine runs on the real VM: not hybrid (leaf 7 EDX bit 15
// clear, no cpu_core/cpu_atom PMUs), one group.
func TestDetectThisMachine(t *testing.T) {
	online, err := sysfs.NewFS("/").OnlineCPUs()
	if err != nil {
		t.Fatal(err)
	}
	id := cpuid.Open("/")
	defer id.Close()
	topo, err := Detect(sysfs.NewFS("/"), id, online)
	if err != nil {
		t.Fatal(err)
	}
	if topo.CPUIDErr != nil {
		t.Fatalf("cpuid device: %v", topo.CPUIDErr)
	}
	r7, err := id.CPUID(online[0], cpuid.LeafExtFeatures, 0)
	if err != nil {
		t.Fatal(err)
	}
	if cpuid.Hybrid(r7) != topo.Hybrid {
		t.Fatalf("leaf 7 hybrid bit %v, Detect hybrid %v", cpuid.Hybrid(r7), topo.Hybrid)
	}
	if topo.Hybrid {
		return // a hybrid host: the one-group check is for uniform machines
	}
	if diff := cmp.Diff([]Group{{Uniform, online}}, topo.Groups()); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
}

// TestCoreTypeSpelling pins the stored spelling (recordings, exports and
// the exporter's labels hold it, so it must not change) and the prose
// names snapshot and matrix print.
func TestCoreTypeSpelling(t *testing.T) {
	tests := []struct {
		typ          CoreType
		stored, long string
	}{
		{PCore, "P", "P-core"},
		{ECore, "E", "E-core"},
		{LPECore, "LP-E", "LP E-core"},
		{Uniform, "", "all"},
		{All, "all", "all"},
	}
	for _, tt := range tests {
		if string(tt.typ) != tt.stored || tt.typ.Long() != tt.long {
			t.Errorf("%q: stored %q, long %q; want %q, %q", tt.typ, string(tt.typ), tt.typ.Long(), tt.stored, tt.long)
		}
	}
}

func TestFromCPUID(t *testing.T) {
	tests := []struct {
		ct    cpuid.CoreType
		hasL3 bool
		want  CoreType
		ok    bool
	}{
		{cpuid.CoreTypeCore, true, PCore, true},
		{cpuid.CoreTypeCore, false, PCore, true},
		{cpuid.CoreTypeAtom, true, ECore, true},
		{cpuid.CoreTypeAtom, false, LPECore, true},
		{cpuid.CoreTypeNone, true, Uniform, false},
		{0x10, true, Uniform, false},
	}
	for _, tt := range tests {
		got, ok := FromCPUID(tt.ct, tt.hasL3)
		if got != tt.want || ok != tt.ok {
			t.Errorf("FromCPUID(%v, %v) = %q, %v; want %q, %v", tt.ct, tt.hasL3, got, ok, tt.want, tt.ok)
		}
	}
}
