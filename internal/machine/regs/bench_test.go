// SPDX-License-Identifier: Apache-2.0

package regs

import (
	"testing"

	"github.com/hwpprobe/hwpprobe/hwp"
)

// BenchmarkDecode measures a catalog decode (named fields, text) against
// the bare field decoder it wraps, for trace consumers that decode every
// MSR write: compare the two ns/op of the same run.
func BenchmarkDecode(b *testing.B) {
	r, _ := ByAddress(hwp.MSR_IA32_HWP_REQUEST)
	b.Run("regs.Decode", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			_ = r.Decode(0x80002e17+uint64(i&0xff), nil)
		}
	})
	b.Run("hwp.DecodeRequest", func(b *testing.B) {
		b.ReportAllocs()
		var sink hwp.Request
		for i := 0; b.Loop(); i++ {
			sink = hwp.DecodeRequest(0x80002e17 + uint64(i&0xff))
		}
		_ = sink
	})
}
