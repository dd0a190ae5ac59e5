// SPDX-License-Identifier: Apache-2.0

package tracefmt

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hwpprobe/hwpprobe/ebpf"
	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/machine/regs"
	"github.com/hwpprobe/hwpprobe/rapl"
)

// DefaultMSRs are the registers `hwpprobe trace` watches by default: what
// intel_pstate, intel_epb and amd-pstate write (docs/kernel-facts.md section 1), and
// MSR_PKG_POWER_LIMIT, which intel_rapl writes when a powercap constraint
// is (drivers/powercap/intel_rapl_msr.c, rapl_msr_update_func()).
var DefaultMSRs = []uint32{
	hwp.MSR_IA32_PM_ENABLE,
	hwp.MSR_IA32_HWP_REQUEST_PKG,
	hwp.MSR_IA32_HWP_INTERRUPT,
	regs.RequestOf(regs.Intel).Address,
	regs.EPB().Address,
	hwp.MSR_IA32_PERF_CTL,
	hwp.MSR_AMD_CPPC_ENABLE,
	regs.RequestOf(regs.AMD).Address,
	rapl.MSR_PKG_POWER_LIMIT,
}

// ErrBadMSR is wrapped by ParseMSRs' errors.
var ErrBadMSR = errors.New("unknown MSR")

// ParseMSRs parses a comma-separated list of register names (any spelling
// package regs accepts: HWP_REQUEST, IA32_HWP_REQUEST, EPB, ...) and hex
// MSR numbers (0x6e0, or 6e0 as rdmsr prints them; any MSR, known to regs
// or not). Duplicates are dropped; the order is kept.
func ParseMSRs(list string) ([]uint32, error) {
	var out []uint32
	seen := map[uint32]bool{}
	for item := range strings.SplitSeq(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, fmt.Errorf("%w: empty item in MSR list %q", ErrBadMSR, list)
		}
		var addr uint32
		if r, err := regs.Lookup(item); err == nil {
			addr = r.Address
		} else {
			hex := strings.TrimPrefix(strings.TrimPrefix(item, "0x"), "0X")
			v, perr := strconv.ParseUint(hex, 16, 32)
			if perr != nil {
				return nil, fmt.Errorf("%w %q: neither a register name (hwpprobe decode --list) nor a hex MSR number such as 0x6e0: %w", ErrBadMSR, item, err)
			}
			addr = uint32(v)
		}
		if !seen[addr] {
			seen[addr] = true
			out = append(out, addr)
		}
	}
	return out, nil
}

// ParseMSRFilter is ParseMSRs for the tracer's in-kernel filter: a list
// longer than ebpf.MaxMSRs is an error wrapping ebpf.ErrTooManyMSRs.
func ParseMSRFilter(list string) ([]uint32, error) {
	msrs, err := ParseMSRs(list)
	if err != nil {
		return nil, err
	}
	if len(msrs) > ebpf.MaxMSRs {
		return nil, fmt.Errorf("%d registers, the in-kernel filter holds at most %d: %w", len(msrs), ebpf.MaxMSRs, ebpf.ErrTooManyMSRs)
	}
	return msrs, nil
}

// FormatMSRs writes MSR numbers as ParseMSRs reads them: "0x199,0x6e0".
func FormatMSRs(msrs []uint32) string {
	parts := make([]string, len(msrs))
	for i, m := range msrs {
		parts[i] = fmt.Sprintf("%#x", m)
	}
	return strings.Join(parts, ",")
}
