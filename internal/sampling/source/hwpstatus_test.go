// SPDX-License-Identifier: Apache-2.0

package source

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpuid"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
	"github.com/hwpprobe/hwpprobe/msr"
)

// Leaf 6 as CPUs report it: an Alder Lake i7-1255U (`cpuid -r` posted to
// LKML on 2024-05-31; EAX bit 7, HWP, set) and this project's VM
// (emu/machines/vm-bare.yaml: EAX 0x4, ARAT only, no HWP).
var (
	leaf6HWP   = cpuid.Regs{EAX: 0x00df8ff7, EBX: 0x00000002, ECX: 0x00000409, EDX: 0x00020003}
	leaf6NoHWP = cpuid.Regs{EAX: 0x4}
)

// failCPUID is a CPUID device that cannot be read.
type failCPUID struct{}

func (failCPUID) CPUID(int, uint32, uint32) (cpuid.Regs, error) {
	return cpuid.Regs{}, errors.New("no /dev/cpu/0/cpuid")
}

// TestHWPStatus: IA32_HWP_STATUS is read on every CPU where CPUID
// enumerates HWP and the register reads, and is otherwise absent with a
// note saying which of the two is missing. The values are the SDM's bits
// as hwp.DecodeStatus reads them: 0x4 is Excursion_To_Minimum, 0x1
// Guaranteed_Performance_Change.
func TestHWPStatus(t *testing.T) {
	leaf6 := func(r cpuid.Regs) cpuid.Map {
		return cpuid.Map{0: {{Leaf: 6}: r}, 1: {{Leaf: 6}: r}}
	}
	tests := []struct {
		name     string
		id       cpuid.Reader
		has      bool // the register reads
		want     sampler.Source
		wantNote string
	}{
		{"HWP enumerated", leaf6(leaf6HWP), true, sampler.SrcMSR, ""},
		{"no HWP in CPUID", leaf6(leaf6NoHWP), true, sampler.SrcNone, "CPUID.06H:EAX bit 7 is clear on cpu0"},
		{"HWP enumerated, register absent", leaf6(leaf6HWP), false, sampler.SrcNone, "IA32_HWP_STATUS (0x777) is not implemented on this CPU"},
		{"CPUID unreadable: the register decides", failCPUID{}, true, sampler.SrcMSR, ""},
		{"no CPUID reader, register absent", nil, false, sampler.SrcNone, "IA32_HWP_STATUS (0x777) is not implemented"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := msr.Map{0: intelRegs(), 1: intelRegs()}
			if tc.has {
				m[0][hwp.MSR_IA32_HWP_STATUS], m[1][hwp.MSR_IA32_HWP_STATUS] = 0, 0x1
			}
			clk := &clock{time.Unix(1000, 0)}
			set, err := Open(Config{Root: t.TempDir(), CPUs: []sampler.Topo{{CPU: 0}, {CPU: 1, Core: 1}}, MSR: m, CPUID: tc.id, Now: clk.now})
			if err != nil {
				t.Fatal(err)
			}
			defer set.Close()
			st := set.Setup()
			if got := st.Info().Sources["HWP_STATUS"]; got != tc.want {
				t.Errorf("HWP_STATUS source %q, want %q", got, tc.want)
			}
			note := ""
			for _, n := range st.Notes {
				if n.Figure == "HWP_STATUS" {
					note = n.Reason
				}
			}
			if tc.wantNote == "" && note != "" || !strings.Contains(note, tc.wantNote) {
				t.Errorf("HWP_STATUS note %q, want %q", note, tc.wantNote)
			}
			s, err := sampler.New(set, sampler.WithClock(clk.now))
			if err != nil {
				t.Fatal(err)
			}
			clk.t = clk.t.Add(time.Second)
			if tc.has {
				m[0][hwp.MSR_IA32_HWP_STATUS] = 0x4 // cpu0 fell below its minimum
			}
			var smp sampler.Sample
			if err := s.Sample(&smp); err != nil {
				t.Fatal(err)
			}
			c0, c1 := smp.CPUs[0].HWPStatus, smp.CPUs[1].HWPStatus
			if tc.want == sampler.SrcNone {
				if c0.OK() || c1.OK() {
					t.Errorf("HWP_STATUS read although absent: cpu0 %+v cpu1 %+v", c0, c1)
				}
				return
			}
			if !hwp.DecodeStatus(c0.Raw).ExcursionMin || !c0.Changed || c0.Prev != 0 {
				t.Errorf("cpu0 HWP_STATUS %+v: want the excursion bit, changed from 0", c0)
			}
			if hwp.DecodeStatus(c1.Raw).ExcursionMin || !hwp.DecodeStatus(c1.Raw).GuaranteedPerfChange || c1.Changed {
				t.Errorf("cpu1 HWP_STATUS %+v: want 0x1 unchanged", c1)
			}
		})
	}
}
