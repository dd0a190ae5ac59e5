// SPDX-License-Identifier: Apache-2.0

package timeline

import (
	"encoding/json"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/machine/regs"
	"github.com/hwpprobe/hwpprobe/internal/machine/snapshot"
	"github.com/hwpprobe/hwpprobe/rapl"
)

// snapInfo is what a run's "before" snapshot gives the timeline: TjMax,
// the power limits and RAPL units of the first package, which package
// each CPU is in, and the registers' values before the run (the old
// values of the first traced writes).
type snapInfo struct {
	read     bool
	tjMax    *float64
	pl1, pl2 *float64
	units    *uint64           // MSR_RAPL_POWER_UNIT
	pkgOf    map[int]int       // CPU -> package
	regs     map[regKey]uint64 // the registers' values before the run
}

// regKey is a register of a CPU, or of a package (cpu = -1 - package) for
// package-scope registers.
type regKey struct {
	cpu int
	msr uint32
}

// readSnapshot reads a snapshot record of format hwpprobe-snapshot-json;
// anything it cannot read is left out (the timeline then has no limits,
// TjMax or old values from it).
func readSnapshot(s recording.Snapshot) snapInfo {
	info := snapInfo{read: true, pkgOf: map[int]int{}, regs: map[regKey]uint64{}}
	var snap snapshot.Snapshot
	if err := json.Unmarshal(s.Data, &snap); err != nil {
		return info
	}
	for _, g := range snap.Groups {
		for _, c := range g.CPUs {
			info.pkgOf[c.CPU] = c.Package
			r := c.Registers
			if q, ok := r.Request(); ok {
				info.regs[regKey{c.CPU, q.Register.Address}] = q.Raw
			}
			if r.EPB != nil {
				info.regs[regKey{c.CPU, regs.EPB().Address}] = uint64(r.EPB.Raw)
			}
		}
	}
	for k, p := range snap.Packages {
		pk := regKey{-1 - p.Package, 0}
		if p.HWPRequestPkg != nil {
			pk.msr = hwp.MSR_IA32_HWP_REQUEST_PKG
			info.regs[pk] = uint64(p.HWPRequestPkg.Raw)
		}
		if p.PowerLimit != nil {
			pk.msr = rapl.MSR_PKG_POWER_LIMIT
			info.regs[pk] = uint64(p.PowerLimit.Raw)
		}
		if k > 0 {
			continue
		}
		info.firstPackage(p)
	}
	return info
}

// firstPackage takes TjMax, the limits and the units of the first package.
func (info *snapInfo) firstPackage(p snapshot.Package) {
	if p.TjMaxC != nil {
		t := float64(*p.TjMaxC)
		info.tjMax = &t
	}
	if p.RAPLUnits != nil {
		u := uint64(p.RAPLUnits.Raw)
		info.units = &u
	}
	switch {
	case p.PowerLimit != nil:
		info.pl1, info.pl2 = &p.PowerLimit.PL1W, &p.PowerLimit.PL2W
	case len(p.Powercap) > 0:
		info.pl1, info.pl2 = p.Powercap[0].PL1W, p.Powercap[0].PL2W
	}
}
