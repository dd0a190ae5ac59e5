// SPDX-License-Identifier: Apache-2.0

package regs

import (
	"errors"
	"strings"
	"testing"
)

// FuzzDecodeArgs runs decode's argument parsing and decoding over
// arbitrary arguments (separated by NUL bytes) and CPU signatures: every
// argument either parses as REG=VALUE and decodes with the others as
// context without panicking, or gives an error wrapping ErrUnknown or
// ErrBadValue.
func FuzzDecodeArgs(f *testing.F) {
	for _, s := range []string{
		"IA32_HWP_REQUEST=0x80002e17",
		"MSR_RAPL_POWER_UNIT=0xa0e03\x00MSR_PKG_POWER_LIMIT=0x42820800218208",
		"0xc00102b0=e295290f",
		"0x690=dec:335544320",
		"MSR_TEMPERATURE_TARGET=0x640000\x00IA32_THERM_STATUS=0x88280000",
		"MSR_TURBO_RATIO_LIMIT=0x1c1c1c1c1c1c1c1c\x00MSR_TURBO_RATIO_LIMIT1=0x0808080808080808",
		"HWP_REQUEST=0x1\nX", "=", "EPB=", "0x=1", "dec:", "EPB=0x1ffffffffffffffff",
	} {
		f.Add(s, uint64(6<<8|0x45))
	}
	f.Fuzz(func(t *testing.T, args string, sig uint64) {
		type parsed struct {
			r *Register
			v uint64
		}
		var ps []parsed
		ctx := Context{CPUSignature: sig}
		for _, a := range strings.Split(args, "\x00") {
			r, v, err := ParseAssignment(a)
			if err != nil {
				if !errors.Is(err, ErrUnknown) && !errors.Is(err, ErrBadValue) {
					t.Fatalf("ParseAssignment(%q): error %v wraps no sentinel", a, err)
				}
				continue
			}
			ctx[r.Address] = v
			ps = append(ps, parsed{r, v})
		}
		for _, p := range ps {
			d := p.r.Decode(p.v, ctx)
			if d.Raw != p.v || d.Address != p.r.Address || d.Register != p.r.Name {
				t.Fatalf("Decode(%s, %#x) = %+v", p.r.Name, p.v, d)
			}
			_ = d.Text()
		}
	})
}
