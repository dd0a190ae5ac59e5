// SPDX-License-Identifier: Apache-2.0

package emutest

import (
	"testing"
)

// TestRegisters checks the copy against the machine's own reads: every
// CPU of mtl-165u, each register its description lists with the value
// the machine answers, and nothing it does not list.
func TestRegisters(t *testing.T) {
	_, m := Root(t, "mtl-165u")
	regs := Registers(t, m)
	if n := m.Description().NumCPUs(); len(regs) != n {
		t.Fatalf("%d CPUs in the copy, want %d", len(regs), n)
	}
	for cpu, rs := range regs {
		for _, r := range m.Description().MSRs {
			want, err := m.ReadMSR(cpu, r.Addr)
			if err != nil {
				t.Fatal(err)
			}
			if got, ok := rs[r.Addr]; !ok || got != want {
				t.Errorf("cpu%d msr %#x: %#x (present %v), want %#x", cpu, r.Addr, got, ok, want)
			}
		}
		if _, ok := rs[0x1]; ok {
			t.Errorf("cpu%d: msr 0x1, which the description does not list, is in the copy", cpu)
		}
	}
}
