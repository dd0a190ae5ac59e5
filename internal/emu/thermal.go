// SPDX-License-Identifier: Apache-2.0

package emu

import (
	"fmt"
	"math"

	"github.com/hwpprobe/hwpprobe/hwp"
)

// IA32_THERM_STATUS / IA32_PACKAGE_THERM_STATUS bits the model sets (SDM
// vol. 3B, "Thermal Monitoring and Protection"; vol. 4, MSRs 19CH and
// 1B1H): bit 0 Thermal Status (the package is at the TCC activation
// temperature and throttled by it), bit 10 Power Limitation Status (the
// CPU runs below its request), each with its sticky log one bit up;
// bits 22:16 the digital readout, °C below TjMax. PROCHOT# (bits 2 and
// 3) is asserted by another agent on the platform, which the model does
// not have: those bits stay as the description gives them.
const (
	thermStatusBit = 1 << 0
	thermPowerBit  = 1 << 10
	thermStatusAll = thermStatusBit | thermPowerBit
	thermReadout   = 0x7f << 16
	thermModelled  = thermStatusAll | thermStatusAll<<1 | thermReadout
)

// tempTarget returns MSR_TEMPERATURE_TARGET as CPU 0 reads it, and
// whether the machine has it.
func (m *Machine) tempTarget() (hwp.TemperatureTarget, bool) {
	v, ok := m.constMSR(m.cpus[0], hwp.MSR_TEMPERATURE_TARGET)
	return hwp.DecodeTemperatureTarget(v), ok
}

// thermalLimit is the thermal model as a third limit on package power.
// With C dT/dt = P - (T - T_amb)/R, the quantity E = (T - T_amb)/R obeys
// tau dE/dt = P - E with tau = R x C: an exponentially weighted average
// of package power exactly like a RAPL limit's, which runPackage solves
// in closed form per interval. The package reaches the TCC activation
// temperature, TjMax - offset (MSR_TEMPERATURE_TARGET), when E reaches
// (TjMax - offset - T_amb)/R; holding E there holds T there. Without a
// thermal section: no limit and no time constant (E follows P).
func (m *Machine) thermalLimit() pl {
	t := m.desc.Thermal
	if t == nil {
		return pl{}
	}
	p := pl{tau: t.RKPerW * t.CJPerK / m.timeScale}
	if tt, ok := m.tempTarget(); ok {
		p.watts = (float64(tt.TjMax) - float64(tt.Offset) - t.AmbientC) / t.RKPerW
		p.enabled = p.watts > 0
	}
	return p
}

// pkgTempC is package pkg's temperature now, T = T_amb + R x E.
func (m *Machine) pkgTempC(pkg int) float64 {
	t := m.desc.Thermal
	if t == nil {
		return 0
	}
	return t.AmbientC + t.RKPerW*m.pkgs[pkg].limits.ewma[limThermal]
}

// coreTempC is c's temperature: the package's less its core type's
// therm_offset_c.
func (m *Machine) coreTempC(c *cpu) float64 { return m.pkgTempC(c.pkg) - c.ct.ThermOffsetC }

// setThermStatus sets the status bits of package ps and of its CPUs for
// one piece of an interval run at sharing level lv: Thermal Status while the
// package is held at the activation temperature (hot), on the package and
// every CPU (the model's TCC acts on the package); Power Limitation
// Status on the package while any limit holds the frequency down, on a
// CPU while it is busy below its request. Each set status sets its log.
func (m *Machine) setThermStatus(ps *pkgState, d *pkgDemand, lv float64, hot bool) {
	var st uint64
	if hot {
		st |= thermStatusBit
	}
	pkg := st
	if lv < fullLevel {
		pkg |= thermPowerBit
	}
	ps.limits.therm = ps.limits.therm&^thermStatusAll | pkg | pkg<<1
	for i := range d.cpus {
		cd := &d.cpus[i]
		b := st
		if cd.b > 0 && cd.freq(lv) < cd.mhz*(1-1e-9) {
			b |= thermPowerBit
		}
		cd.c.therm = cd.c.therm&^thermStatusAll | b | b<<1
	}
}

// thermStatus is a thermal status register's value: the description's
// constant bits (reading valid, resolution) with the model's status and
// log bits and the readout TjMax - temp, rounded, in [0, 127].
func (m *Machine) thermStatus(base, bits uint64, tempC float64) uint64 {
	tt, _ := m.tempTarget()
	readout := uint64(min(max(math.Round(float64(tt.TjMax)-tempC), 0), 127))
	return base&^thermModelled | bits&(thermStatusAll|thermStatusAll<<1) | readout<<16
}

// thermalSummary describes the thermal model for Summary, or "".
func (m *Machine) thermalSummary() string {
	t := m.desc.Thermal
	if t == nil {
		return ""
	}
	s := fmt.Sprintf("thermal: ambient %g C, R %g K/W, C %g J/K (tau %s; %s)", t.AmbientC, t.RKPerW, t.CJPerK,
		seconds(t.RKPerW*t.CJPerK/m.timeScale), t.Source)
	if tt, ok := m.tempTarget(); ok {
		s += fmt.Sprintf(", TCC activation %d C (TjMax %d - offset %d)", int(tt.TjMax)-int(tt.Offset), tt.TjMax, tt.Offset)
	}
	return s
}
