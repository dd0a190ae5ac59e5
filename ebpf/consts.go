// SPDX-License-Identifier: Apache-2.0

package ebpf

import (
	"fmt"

	cebpf "github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// Immediates that msrtrace.c's CONST(k) markers stand for (see the comment
// there): a marker is a ld_imm64 of constMagic + k.
const (
	constMagic  = 0x7ead0000
	kMSR0       = 0
	kNrMSRs     = MaxMSRs
	kStream     = MaxMSRs + 1
	kFilterCPUs = MaxMSRs + 2
	kWakeup     = MaxMSRs + 3
	nConsts     = MaxMSRs + 4

	// noMSR fills unused MSR slots: msrtrace.c compares a u32 with it, so
	// it matches nothing.
	noMSR = 1 << 32
)

// programsWithConsts are the programs of msrtrace.c that use CONST.
var programsWithConsts = []string{msrtraceProgWriteMsr, msrtraceProgWriteMsrSeen, msrtraceProgTestWriteMsr, msrtraceProgTpRecord}

// constValues returns the immediates for opts.
func constValues(msrs []uint32, stream, filterCPUs bool, wakeup uint64) [nConsts]uint64 {
	var v [nConsts]uint64
	for i := range MaxMSRs {
		v[kMSR0+i] = noMSR
		if i < len(msrs) {
			v[kMSR0+i] = uint64(msrs[i])
		}
	}
	b := func(x bool) uint64 {
		if x {
			return 1
		}
		return 0
	}
	v[kNrMSRs] = uint64(len(msrs))
	v[kStream] = b(stream)
	v[kFilterCPUs] = b(filterCPUs)
	v[kWakeup] = wakeup
	return v
}

// patchConsts replaces every CONST marker in spec's programs with its
// value. Each write_msr handler must have every MSR slot, or the object
// does not match this loader: that is an error, not a silent no-filter.
func patchConsts(spec *cebpf.CollectionSpec, v [nConsts]uint64) error {
	for _, name := range programsWithConsts {
		p := spec.Programs[name]
		if p == nil {
			return fmt.Errorf("program %s missing from the object", name)
		}
		seen := map[int]bool{}
		for i := range p.Instructions {
			ins := &p.Instructions[i]
			if !ins.IsConstantLoad(asm.DWord) {
				continue
			}
			k := ins.Constant - constMagic
			if k < 0 || k >= nConsts {
				continue
			}
			ins.Constant = int64(v[k])
			seen[int(k)] = true
		}
		if name != msrtraceProgTpRecord {
			for k := range MaxMSRs + 1 {
				if !seen[k] {
					return fmt.Errorf("program %s: no marker for constant %d: object and loader disagree", name, k)
				}
			}
		}
	}
	return nil
}
