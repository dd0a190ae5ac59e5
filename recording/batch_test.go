package recording

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// bitsCmp compares Values bit for bit (so -0 differs from 0), all NaNs
// equal.
var bitsCmp = cmp.Comparer(func(a, b Value) bool {
	return math.Float64bits(float64(a)) == math.Float64bits(float64(b)) || (math.IsNaN(float64(a)) && math.IsNaN(float64(b)))
})

// TestColumnarRoundTrip: sample and trace batches come back from the
// columnar encoding exactly: every float bit for bit, NA as NA, 64-bit
// registers, absent registers absent.
func TestColumnarRoundTrip(t *testing.T) {
	negZero := Value(math.Copysign(0, -1))
	s := Samples{Run: 7, CPUColumns: []string{"Avg_MHz", "Busy%", "IPC", "Odd"}, PackageColumns: []string{"PkgWatt"},
		Samples: []Sample{
			{TimeNs: 1_700_000_000_100_000_000, IntervalNs: 100_000_000,
				CPUs: []CPURow{
					{CPU: 0, Core: 0, CoreType: "P", Values: []Value{2400.123, 37.25, NA(), 1e300}, Regs: []Reg{{0x774, bigReg}, {0x1b0, 6}}},
					{CPU: 1, Core: 1, Package: 1, CoreType: "LP-E", Values: []Value{800, 0, 1.5, negZero}, Regs: []Reg{{0x1b0, 7}}},
					{CPU: 2, Core: -1, Values: []Value{-5.5, 100, 2.25, Value(math.Pi)}},
				},
				Packages:  []PackageRow{{Package: 0, Values: []Value{12.75}, Regs: []Reg{{0x64F, 0x1c000000}}}, {Package: 1, Values: []Value{NA()}}},
				Summaries: []SummaryRow{{Type: "all", CPUs: 3, Values: []Value{1600.25, 18.625, 1.5, NA()}, PackageValues: []Value{12.75}}}},
			{TimeNs: 1_700_000_000_200_000_000, IntervalNs: 99_999_999},
			{TimeNs: 1_700_000_000_300_000_000, IntervalNs: 100_000_001,
				CPUs: []CPURow{{CPU: 0, Values: []Value{2400.124, NA(), NA(), NA()}, Regs: []Reg{{0x774, 0}}}}},
		}}
	tr := Trace{Run: 7, Lost: 3, Events: []TraceEvent{
		{TimeNs: 1_700_000_000_050_000_000, CPU: 1, PID: 12, Comm: "kworker/1:1", MSR: 0x774, Value: bigReg},
		{TimeNs: 1_700_000_000_040_000_000, CPU: 0, PID: 0, Comm: "swapper/0", MSR: 0xC00102B3, Value: 6, Failed: true},
		{TimeNs: 1_700_000_000_060_000_000, CPU: 0, PID: 12, Comm: "kworker/1:1", MSR: 0x1b0, Value: 0},
	}}
	// An emulated machine's writes (format 2.1) beside the kernel's: old 0
	// is kept apart from no old value.
	emu := Trace{Run: 7, Events: []TraceEvent{
		{TimeNs: 1_700_000_000_050_000_000, CPU: 1, PID: 12, Comm: "kworker/1:1", MSR: 0x774, Value: bigReg},
		{TimeNs: 1_700_000_000_070_000_000, CPU: 13, PID: 4242, Comm: "sh", MSR: 0x774, Value: 0x3e3e, Old: bigReg, Emulated: true},
		{TimeNs: 1_700_000_000_080_000_000, CPU: 0, PID: 4242, Comm: "sh", MSR: 0x610, Value: 0x42, Old: 0, Emulated: true},
	}}
	for _, r := range []Record{s, tr, emu, Samples{Run: 1}, Trace{Run: 1}} {
		var e batchEnc
		var p []byte
		var err error
		var got Record
		switch r := r.(type) {
		case Samples:
			if p, err = e.encodeSamples(r); err == nil {
				got, err = new(batchDec).decodeSamples(bytes.Clone(p), PartRows)
			}
		case Trace:
			if p, err = e.encodeTrace(r); err == nil {
				got, err = new(batchDec).decodeTrace(bytes.Clone(p))
			}
		}
		if err != nil {
			t.Fatalf("%T: %v", r, err)
		}
		if diff := cmp.Diff(r, got, bitsCmp, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%T (-want +got):\n%s", r, diff)
		}
	}
}

// TestDecimals: a column is stored as integers with the fewest decimals
// that give every value back, or as float64 bits.
func TestDecimals(t *testing.T) {
	tests := []struct {
		vals []Value
		want int
	}{
		{[]Value{1, 2, NA(), 3000}, 0},
		{[]Value{2400.123, 800.5}, 3},
		{[]Value{Value(37.123456789).Round(4), 0.0001}, 4},
		{[]Value{0.1, Value(math.Pi)}, -1},
		{[]Value{Value(math.Copysign(0, -1))}, -1},
		{[]Value{1 << 60}, -1},
		{[]Value{NA()}, 0},
	}
	for _, tt := range tests {
		if got := decimals(len(tt.vals), func(i int) Value { return tt.vals[i] }); got != tt.want {
			t.Errorf("%v: %d decimals, want %d", tt.vals, got, tt.want)
		}
	}
}

// TestVarints: the decoder's fast paths agree with encoding/binary on
// varints of every length, at every position near the end of the data.
func TestVarints(t *testing.T) {
	var want []int64
	var b []byte
	prev := int64(0)
	vals := []int64{0, 1, -1, 63, -64, 64, 1 << 20, -(1 << 27), 1 << 34, 1 << 48, 1 << 55, -(1 << 56), math.MaxInt64, math.MinInt64, 5}
	for i := range 40 { // runs of one-byte deltas, some zero
		vals = append(vals, 5+int64(i%7)-int64(i%3)*int64(i/20))
	}
	for range 17 { // a run of no change
		vals = append(vals, 7)
	}
	for _, v := range vals {
		b = binary.AppendVarint(b, v-prev)
		prev = v
		want = append(want, v)
	}
	for cut := range len(b) + 1 {
		got := make([]int64, len(want))
		n := 0
		for k := range want {
			if _, ok := varints(b[:cut], got[:k+1]); ok {
				n = k + 1
			}
		}
		if diff := cmp.Diff(want[:n], got[:n]); diff != "" {
			t.Errorf("cut at %d (-want +got):\n%s", cut, diff)
		}
		if rest, ok := varints(b, got); !ok || len(rest) != 0 || !cmp.Equal(want, got) {
			t.Fatalf("whole: ok %v, %d bytes left, %v", ok, len(rest), got)
		}
	}
}
