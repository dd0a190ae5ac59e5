// SPDX-License-Identifier: Apache-2.0

package tooltable

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Lines as the tools printed them under hwpemu (mtl-165u, every CPU busy
// under performance).
const (
	watchOut = `# EMULATED machine "mtl-165u": every figure below comes from hwpemu, not from hardware
    Type  Package     Core      CPU  Avg_MHz    Busy%  Bzy_MHz  TSC_MHz  PkgWatt   LimRsn   ExcMin
       P        -        -        -     4427    99.75     4438     1689        -               4/4
       -        -        -        -     3490    99.93     3493     1694    56.96             14/14
       P        0        0        0     4308    98.98     4352     1665    56.96   0x0800        1
    LP-E        0       11       13     1895   100.00     1895     1700                          0
    Type  Package     Core      CPU  Avg_MHz    Busy%  Bzy_MHz  TSC_MHz  PkgWatt   LimRsn   ExcMin
       P        0        0        0     2124   100.00     2124     1700    15.00   0x0400        1
`
	turbostatOut = "CPU\tAvg_MHz\tBusy%\tBzy_MHz\tTSC_MHz\t            HWPsts\tPkgWatt\t            LimRsn\n" +
		"-\t3523\t80.95\t3511\t2107\t0x0000000000000000\t57.43\t0x0000000008000800\n" +
		"0\t4476\t80.95\t4476\t2100\t0x0000000000000004\t57.00\t0x0000000008000800\n" +
		"13\t1894\t80.94\t1895\t2099\t0x0000000000000004\n"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  []Table
		want []Table
	}{
		{"watch", Watch(watchOut), []Table{
			{
				{"Type": "P", "Package": "-", "Core": "-", "CPU": "-", "Avg_MHz": "4427", "Busy%": "99.75", "Bzy_MHz": "4438", "TSC_MHz": "1689",
					"PkgWatt": "-", "ExcMin": "4/4"},
				{"Type": "-", "Package": "-", "Core": "-", "CPU": "-", "Avg_MHz": "3490", "Busy%": "99.93", "Bzy_MHz": "3493", "TSC_MHz": "1694",
					"PkgWatt": "56.96", "ExcMin": "14/14"},
				{"Type": "P", "Package": "0", "Core": "0", "CPU": "0", "Avg_MHz": "4308", "Busy%": "98.98", "Bzy_MHz": "4352", "TSC_MHz": "1665",
					"PkgWatt": "56.96", "LimRsn": "0x0800", "ExcMin": "1"},
				{"Type": "LP-E", "Package": "0", "Core": "11", "CPU": "13", "Avg_MHz": "1895", "Busy%": "100.00", "Bzy_MHz": "1895",
					"TSC_MHz": "1700", "ExcMin": "0"},
			},
			{
				{"Type": "P", "Package": "0", "Core": "0", "CPU": "0", "Avg_MHz": "2124", "Busy%": "100.00", "Bzy_MHz": "2124", "TSC_MHz": "1700",
					"PkgWatt": "15.00", "LimRsn": "0x0400", "ExcMin": "1"},
			},
		}},
		{"turbostat", Turbostat(turbostatOut), []Table{{
			{"CPU": "-", "Avg_MHz": "3523", "Busy%": "80.95", "Bzy_MHz": "3511", "TSC_MHz": "2107", "HWPsts": "0x0000000000000000",
				"PkgWatt": "57.43", "LimRsn": "0x0000000008000800"},
			{"CPU": "0", "Avg_MHz": "4476", "Busy%": "80.95", "Bzy_MHz": "4476", "TSC_MHz": "2100", "HWPsts": "0x0000000000000004",
				"PkgWatt": "57.00", "LimRsn": "0x0000000008000800"},
			{"CPU": "13", "Avg_MHz": "1894", "Busy%": "80.94", "Bzy_MHz": "1895", "TSC_MHz": "2099", "HWPsts": "0x0000000000000004"},
		}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, tc.got); d != "" {
				t.Errorf("tables (-want +got):\n%s", d)
			}
		})
	}
}

func TestRowLookups(t *testing.T) {
	tb := Turbostat(turbostatOut)[0]
	if w, ok := tb.CPU(0).Float("PkgWatt"); !ok || w != 57 {
		t.Errorf("cpu0 PkgWatt %v %v, want 57", w, ok)
	}
	if v, ok := tb.CPU(13).Float("HWPsts"); !ok || v != 4 {
		t.Errorf("cpu13 HWPsts %v %v, want 4 (hex)", v, ok)
	}
	if _, ok := tb.CPU(13).Float("PkgWatt"); ok {
		t.Error("cpu13 has a PkgWatt")
	}
	if tb.CPU(5) != nil {
		t.Error("a row for cpu5")
	}
	if r := tb.Find(map[string]string{"CPU": "-"}); r["Bzy_MHz"] != "3511" {
		t.Errorf("summary row %v", r)
	}
	if _, ok := (Row{"x": "-"}).Float("x"); ok {
		t.Error(`"-" read as a number`)
	}
}
