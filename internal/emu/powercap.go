// SPDX-License-Identifier: Apache-2.0

package emu

import (
	"math/bits"
	"strconv"
	"strings"
	"syscall"

	"github.com/hwpprobe/hwpprobe/internal/emu/vfs"
	"github.com/hwpprobe/hwpprobe/rapl"
)

// putLiveConstraint adds constraint i's power_limit_uw and time_window_us
// of package pkg, read from and written to the model's
// MSR_PKG_POWER_LIMIT.
func (m *Machine) putLiveConstraint(root *vfs.Dir, pre string, pkg, i int) {
	show := func(window bool) func() (string, error) {
		return func() (string, error) {
			c := rapl.PowercapConstraints(m.pkgs[pkg].limits.reg, m.raplUnits())[i]
			if window {
				return itoa(c.TimeWindowUS), nil
			}
			return itoa(c.PowerLimitUW), nil
		}
	}
	root.Put(pre+"power_limit_uw", m.rw(show(false), func(b []byte) error { return m.storeConstraint(pkg, i, false, b) }))
	root.Put(pre+"time_window_us", m.rw(show(true), func(b []byte) error { return m.storeConstraint(pkg, i, true, b) }))
}

func (m *Machine) raplUnits() uint64 { return m.msrs[msrKey{m.desc.RAPL.UnitMSR, ""}].Value }

// Field masks of MSR_PKG_POWER_LIMIT (intel_rapl_common.c: POWER_LIMIT1_MASK,
// TIME_WINDOW1_MASK and their PL2 counterparts 32 bits up; lock bit 63,
// POWER_HIGH_LOCK).
const (
	plPowerMask  = 0x7fff
	plWindowMask = 0x7f << 17
	plLockBit    = 1 << 63
)

// storeConstraint is powercap's store_constraint_power_limit_uw() and
// store_constraint_time_window_us() (drivers/powercap/powercap_sys.c)
// with intel_rapl's set_power_limit()/set_time_window()
// (drivers/powercap/intel_rapl_common.c): the value is kstrtoull(buf, 10)
// (else EINVAL); a register locked by the firmware (bit 63) refuses with
// ENODATA, the error powercap_sys.c returns for any failure of the
// driver (EACCES there); otherwise the value becomes raw units as
// rapl_write_data_raw() makes them, truncated to the field's bits like
// the kernel's mask (a power past 0x7fff units wraps, as it does there),
// and the register is rewritten on the package's first CPU.
func (m *Machine) storeConstraint(pkg, i int, window bool, b []byte) error {
	v, err := kstrtoull(b)
	if err != nil {
		return err
	}
	l := &m.pkgs[pkg].limits
	if l.reg&plLockBit != 0 {
		return syscall.ENODATA
	}
	units := m.raplUnits()
	var field, mask uint64
	if window {
		field, mask = timeWindowRaw(v, uint64(1000000)>>(units>>16&0xf))<<17, plWindowMask
	} else {
		field, mask = v/(uint64(1000000)>>(units&0xf))&plPowerMask, plPowerMask
	}
	shift := uint(32 * i)
	reg := l.reg&^(mask<<shift) | (field&mask)<<shift
	m.wrmsrPkg(pkg, reg)
	return nil
}

// timeWindowRaw is rapl_compute_time_window_core() to raw: µs over the
// time unit, then y = ilog2, f = 4 (v - 2^y) / 2^y, as (y | f << 5); a
// value below one time unit is 0; y past 0x1f gives 0x7f.
func timeWindowRaw(us, unit uint64) uint64 {
	if unit == 0 || us < unit {
		return 0
	}
	v := us / unit
	y := uint64(bits.Len64(v) - 1)
	if y > 0x1f {
		return 0x7f
	}
	f := 4 * (v - 1<<y) / (1 << y)
	return y&0x1f | (f&0x3)<<5
}

// kstrtoull is the kernel's kstrtoull(s, 10, &v) for a sysfs buffer: an
// optional '+', decimal digits, one optional trailing newline; anything
// else, no digits, or a value past 64 bits is EINVAL (powercap_sys.c turns
// every kstrtoull error into EINVAL).
func kstrtoull(b []byte) (uint64, error) {
	s := strings.TrimSuffix(string(b), "\n")
	s = strings.TrimPrefix(s, "+")
	if s == "" || strings.ContainsAny(s[:1], "+-") {
		return 0, syscall.EINVAL
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, syscall.EINVAL
	}
	return v, nil
}

// wrmsrPkg writes package pkg's MSR_PKG_POWER_LIMIT as intel_rapl does,
// on the package's first online CPU (rapl_msr_write_raw() on lead_cpu),
// and logs the write. Caller holds m.mu.
func (m *Machine) wrmsrPkg(pkg int, v uint64) {
	l := &m.pkgs[pkg].limits
	for _, c := range m.cpus {
		if c.online && c.pkg == pkg {
			c.regs[m.desc.RAPL.LimitMSR] = l.reg // the log's old value
			m.wrmsr(c, m.desc.RAPL.LimitMSR, v)
			break
		}
	}
	l.reg = v
}
