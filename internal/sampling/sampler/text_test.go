// SPDX-License-Identifier: Apache-2.0

package sampler

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tableRows renders smp's rows of a Table of st with the columns spec.
func tableRows(t *testing.T, st *Setup, spec string, perCPU bool, smp *Sample) string {
	t.Helper()
	cols, err := ParseColumns(spec)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := NewTable(st, cols, perCPU).WriteRows(&b, smp); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestParseColumns(t *testing.T) {
	got, err := ParseColumns("avg_mhz, Busy%,PKGWATT,epp")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"Avg_MHz", "Busy%", "PkgWatt", "EPP"}, got); d != "" {
		t.Errorf("ParseColumns (-want +got):\n%s", d)
	}
	for _, bad := range []string{"Avg_MHz,Nope", "", " , "} {
		if _, err := ParseColumns(bad); !errors.Is(err, ErrUnknownColumn) {
			t.Errorf("ParseColumns(%q) = %v, want ErrUnknownColumn", bad, err)
		}
	}
}

func TestDefaultColumns(t *testing.T) {
	st := &Setup{TSC: SrcPerf, Energy: [NumDomains]EnergyCounter{DomPsys: {Src: SrcPerf}}}
	if d := cmp.Diff([]string{"TSC_MHz", "SysWatt"}, DefaultColumns(st)); d != "" {
		t.Errorf("DefaultColumns (-want +got):\n%s", d)
	}
}

// TestTableText renders the sample of TestSampleFormulas: summaries per
// core type, the machine row "-", per-CPU rows with package columns on the
// package's first CPU, "!" on a changed register, "var" where CPUs differ.
func TestTableText(t *testing.T) {
	r := &seqReader{setup: hybridSetup(), steps: []Raw{
		{CPU: []RawCPU{{HWPRequest: 0x80002b0c}, {HWPRequest: 0x80002b0c}}, Pkg: []RawPkg{{}}},
		{CPU: []RawCPU{
			{APERF: 1.5e9, MPERF: 1e9, TSC: 2e9, HWPRequest: 0x40002b0c, ThermStatus: 0x882a0000},
			{APERF: 1e9, MPERF: 2e9, TSC: 2e9, HWPRequest: 0x80002b0c, ThermStatus: 0x88300000},
		}, Pkg: []RawPkg{{Energy: [NumDomains]uint64{16384 * 12, 0}, ThermStatus: 0x88280000, LimitReasons: 0x1}}},
	}}
	smp := firstSample(t, r)
	cols, _ := ParseColumns("Avg_MHz,Busy%,Bzy_MHz,PkgWatt,CorWatt,HWPmin,EPP,LimRsn")
	tab := NewTable(r.setup, cols, true)
	var b strings.Builder
	if err := tab.WriteHeader(&b); err != nil {
		t.Fatal(err)
	}
	if err := tab.WriteRows(&b, &smp); err != nil {
		t.Fatal(err)
	}
	// cpu0's request went from 0x80002b0c to 0x40002b0c: only EPP
	// (bits 31:24, 128 -> 64) changed, so only EPP is marked.
	want := `    Type  Package     Core      CPU  Avg_MHz    Busy%  Bzy_MHz  PkgWatt  CorWatt   HWPmin      EPP   LimRsn
       P        -        -        -     1500    50.00     3000        -        -       12       64         
       E        -        -        -     1000   100.00     1000        -        -       12      128         
       -        -        -        -     1250    75.00     1667    12.00   (zero)       12      var         
       P        0        0        0     1500    50.00     3000    12.00   (zero)       12      64!   0x0001
       E        0        8        1     1000   100.00     1000                         12      128         
`
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("table (-want +got):\n%s", d)
	}
	if n := tab.Rows(&smp); n != 5 {
		t.Errorf("Rows = %d, want 5", n)
	}
}

// TestTableAMD: MSR_AMD_CPPC_REQ holds the maximum in bits 7:0 and the
// minimum in 15:8 (docs/kernel-facts.md section 2; AMD PPR), the reverse of Intel's
// IA32_HWP_REQUEST. 0x80003cbe: max 0xbe = 190, min 0x3c = 60, EPP 128.
func TestTableAMD(t *testing.T) {
	st := &Setup{CPUs: []Topo{{CPU: 0}}, HWPRequest: SrcMSR, HWPRegister: 0xC00102B3}
	smp := firstSample(t, &seqReader{setup: st, steps: []Raw{{CPU: []RawCPU{{HWPRequest: 0x80003cbe}}}}})
	if got, want := strings.Fields(tableRows(t, st, "HWPmin,HWPmax,EPP", false, &smp)), []string{"-", "-", "-", "60", "190", "128"}; !cmp.Equal(got, want) {
		t.Errorf("row %q, want %q", got, want)
	}
	if in := st.Info(); in.HWPRegister != 0xC00102B3 {
		t.Errorf("Info.HWPRegister = %#x", in.HWPRegister)
	}
}
