// SPDX-License-Identifier: Apache-2.0

package cpuidshim

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// objdumpCPUID matches a CPUID line of objdump -d: "  5485:\t0f a2 \tcpuid".
var objdumpCPUID = regexp.MustCompile(`(?m)^\s*([0-9a-f]+):\t0f a2\s+\tcpuid\s*$`)

// TestSitesMatchObjdump: the CPUID instructions found by disassembly are
// exactly those GNU objdump -d finds, in the kernel's own tools (Debian
// linux-cpupower, stripped, position-independent) and in a program built
// here with its symbols.
func TestSitesMatchObjdump(t *testing.T) {
	_, prog := build(t)
	for _, path := range []string{"/usr/sbin/turbostat", "/usr/sbin/x86_energy_perf_policy", prog} {
		out, err := exec.Command("objdump", "-d", path).Output()
		if err != nil {
			t.Fatalf("objdump -d %s: %v (apt-get install binutils; scripts/install-deps.sh)", path, err)
		}
		var want []uint64
		for _, m := range objdumpCPUID.FindAllStringSubmatch(string(out), -1) {
			a, _ := strconv.ParseUint(m[1], 16, 64)
			want = append(want, a)
		}
		sites, err := Sites(path)
		if err != nil {
			t.Fatal(err)
		}
		var got []uint64
		for _, s := range sites {
			got = append(got, s.Addr)
		}
		if len(want) == 0 {
			t.Errorf("%s: objdump finds no CPUID instruction:\n%.2000s", path, out)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: CPUID sites (-objdump +Sites):\n%s", path, d)
		}
		t.Logf("%s: %d CPUID instructions", path, len(got))
	}
}

// TestSitesOffsets: each site's file offset holds 0F A2.
func TestSitesOffsets(t *testing.T) {
	for _, path := range []string{"/usr/sbin/turbostat", "/usr/sbin/x86_energy_perf_policy"} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sites, err := Sites(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sites {
			if b[s.Offset] != 0x0f || b[s.Offset+1] != 0xa2 {
				t.Errorf("%s: offset %#x holds % x, want 0f a2", path, s.Offset, b[s.Offset:s.Offset+2])
			}
		}
	}
}

func TestSitesNotELF(t *testing.T) {
	if _, err := Sites("testdata/cpuid.c"); err == nil {
		t.Error("Sites of a C source: no error")
	}
}
