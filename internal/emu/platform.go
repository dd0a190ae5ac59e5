// SPDX-License-Identifier: Apache-2.0

package emu

import (
	"math"
	"strconv"

	"github.com/hwpprobe/hwpprobe/internal/emu/vfs"
	"github.com/hwpprobe/hwpprobe/rapl"
)

// Constants of the platform-pl1 variant's controller (assumed;
// docs/emulator.md, "Model variants"): it reads the package temperature
// every platformPollS seconds (divided by the time scale), as thermald
// polls its sensors; once the package has read above platformTripC at
// platformHoldS / platformPollS polls in a row it writes PL1 down to
// platformPL1Factor of the value in force, and once it has read below
// platformClearC as many polls in a row it writes that value back.
const (
	platformPollS     = 1.0
	platformHoldS     = 10.0
	platformTripC     = 70.0
	platformClearC    = 55.0
	platformPL1Factor = 2.0 / 3
	// platformMaxTimeScale bounds the time scale under the controller:
	// every poll runs the model once, so a poll each millisecond is the
	// most a read of the machine pays for.
	platformMaxTimeScale = 1000.0
)

// platformComm is the command name the controller's writes carry in the
// write log (pid 0: no process of the emulated machine made them).
const platformComm = "hwpemu-platform-pl1"

// platformState is the controller's state for one package.
type platformState struct {
	hot, cool int    // polls in a row above platformTripC, below platformClearC
	lowered   bool   // PL1 is the controller's
	savedUW   uint64 // the PL1 it lowered, to write back
}

// platformPoll is one poll of the controller, agoNs nanoseconds before
// the present (the write log's time): each package's temperature moves
// its counts, and PL1 is lowered or restored through the powercap zone's
// constraint_0_power_limit_uw, as a platform daemon writes it (intel_rapl
// then writes MSR_PKG_POWER_LIMIT, which the write log records). A
// refused write (the register's lock bit) leaves the controller as it
// was. Caller holds m.mu.
func (m *Machine) platformPoll(agoNs uint64) {
	need := int(math.Round(platformHoldS / platformPollS))
	for p, ps := range m.pkgs {
		st := &ps.platform
		t := m.pkgTempC(p)
		st.hot, st.cool = countIf(t > platformTripC, st.hot), countIf(t < platformClearC, st.cool)
		pl1 := rapl.PowercapConstraints(ps.limits.reg, m.raplUnits())[0].PowerLimitUW
		switch {
		case !st.lowered && st.hot >= need:
			if m.platformWrite(p, uint64(float64(pl1)*platformPL1Factor), agoNs) {
				st.lowered, st.savedUW = true, pl1
			}
		case st.lowered && st.cool >= need:
			if m.platformWrite(p, st.savedUW, agoNs) {
				st.lowered = false
			}
		}
	}
}

// countIf returns n+1 when cond holds, else 0.
func countIf(cond bool, n int) int {
	if cond {
		return n + 1
	}
	return 0
}

// platformWrite writes uw to package pkg's PL1 as the controller,
// reporting whether the kernel's rules took it.
func (m *Machine) platformWrite(pkg int, uw, agoNs uint64) bool {
	l := &m.writes
	prev, prevAgo := l.writer, l.ago
	l.writer, l.ago = vfs.Caller{Comm: platformComm}, agoNs
	defer func() { l.writer, l.ago = prev, prevAgo }()
	return m.storeConstraint(pkg, 0, false, []byte(strconv.FormatUint(uw, 10))) == nil
}
