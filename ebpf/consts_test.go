// SPDX-License-Identifier: Apache-2.0

package ebpf

import (
	"testing"

	"github.com/cilium/ebpf/asm"
)

// Every CONST marker in the object is replaced, in every program, and an
// object whose markers do not match the loader is refused.
func TestPatchConsts(t *testing.T) {
	spec, err := loadMsrtrace()
	if err != nil {
		t.Fatal(err)
	}
	v := constValues([]uint32{0x774, 0x1b0}, true, false, 4096)
	if err := patchConsts(spec, v); err != nil {
		t.Fatal(err)
	}
	var msrs []int64
	for _, name := range programsWithConsts {
		for _, ins := range spec.Programs[name].Instructions {
			if ins.IsConstantLoad(asm.DWord) && ins.Constant >= constMagic && ins.Constant < constMagic+nConsts {
				t.Errorf("%s: marker %#x left in %v", name, ins.Constant, ins)
			}
			if name == msrtraceProgWriteMsr && ins.IsConstantLoad(asm.DWord) && (ins.Constant == 0x774 || ins.Constant == 0x1b0 || ins.Constant == noMSR) {
				msrs = append(msrs, ins.Constant)
			}
		}
	}
	if len(msrs) != MaxMSRs {
		t.Errorf("write_msr compares with %d MSR immediates (%x), want %d", len(msrs), msrs, MaxMSRs)
	}

	// An object without the markers (here: already patched) is refused.
	if err := patchConsts(spec, v); err == nil {
		t.Error("patching an object without markers succeeded")
	}
}
