// SPDX-License-Identifier: Apache-2.0

package sysfs

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// PowercapZone is a top-level RAPL zone of the powercap class
// (Documentation/power/powercap/powercap.rst): /sys/class/powercap/
// intel-rapl:N (MSR interface, driver intel_rapl_msr; AMD parts use the same
// name) or intel-rapl-mmio:N (MMIO interface, processor_thermal_rapl).
type PowercapZone struct {
	ID          string // directory name: "intel-rapl:0", "intel-rapl-mmio:0"
	Name        string // name: "package-0", "psys"
	Enabled     *int64
	Constraints []PowercapConstraint
}

// MMIO reports whether the zone is the MMIO copy of the package limits.
func (z PowercapZone) MMIO() bool { return strings.HasPrefix(z.ID, "intel-rapl-mmio:") }

// PowercapConstraint is constraint_K_* of a zone: K 0 is "long_term" (PL1),
// 1 "short_term" (PL2), 2 "peak_power" on some parts.
type PowercapConstraint struct {
	Index        int
	Name         string
	PowerLimitUW *int64 // constraint_K_power_limit_uw
	TimeWindowUS *int64 // constraint_K_time_window_us
	MaxPowerUW   *int64 // constraint_K_max_power_uw
}

// powercapID splits a RAPL zone's directory name: the interface
// ("intel-rapl", the MSR one, which AMD parts use too, or
// "intel-rapl-mmio") and, for a sub-zone such as intel-rapl:0:1, its
// parent zone's name ("intel-rapl:0"; "" for a top-level zone). ok is
// false for anything else under the powercap class (other control types,
// the control type directories themselves). One rule for every reader of
// powercap in this project.
func powercapID(id string) (iface, parent string, ok bool) {
	iface, rest, found := strings.Cut(id, ":")
	if !found || (iface != "intel-rapl" && iface != "intel-rapl-mmio") {
		return "", "", false
	}
	parts := strings.Split(rest, ":")
	for _, p := range parts {
		if _, err := strconv.ParseUint(p, 10, 32); err != nil {
			return "", "", false
		}
	}
	switch len(parts) {
	case 1:
		return iface, "", true
	case 2:
		return iface, iface + ":" + parts[0], true
	}
	return "", "", false
}

// powercapClass is the powercap class directory below the root.
const powercapClass = "sys/class/powercap"

// powercapEntries lists the RAPL zone directories of the powercap class
// (powercapID), in directory order; no class directory gives none.
func (f FS) powercapEntries() ([]os.DirEntry, error) {
	entries, err := os.ReadDir(f.Path(powercapClass))
	if IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(entries, func(e os.DirEntry) bool {
		_, _, ok := powercapID(e.Name())
		return !ok
	}), nil
}

// EnergyZone is a RAPL zone with an energy counter, top-level or
// sub-zone, of the MSR interface (the MMIO interface's package zone
// counts the same energy again).
type EnergyZone struct {
	ID         string // "intel-rapl:0", "intel-rapl:0:0"
	Name       string // "package-0", "core", "uncore", "dram", "psys"
	ParentName string // the parent zone's name for a sub-zone ("package-0"), else ""
	EnergyUJ   string // path of energy_uj
	MaxUJ      uint64 // max_energy_range_uj: energy_uj wraps to 0 past it
}

// EnergyZones lists the MSR interface's RAPL zones that name themselves
// and give their counter's range, sorted by directory name; a zone whose
// files cannot be read is left out. No powercap directory gives an empty
// list.
func (f FS) EnergyZones() ([]EnergyZone, error) {
	entries, err := f.powercapEntries()
	if err != nil {
		return nil, err
	}
	var zones []EnergyZone
	for _, e := range entries {
		iface, parent, _ := powercapID(e.Name())
		if iface != "intel-rapl" {
			continue
		}
		z := EnergyZone{ID: e.Name(), EnergyUJ: f.Path(powercapClass, e.Name(), "energy_uj")}
		if z.Name, err = f.ReadString(powercapClass, e.Name(), "name"); err != nil {
			continue
		}
		if parent != "" {
			if z.ParentName, err = f.ReadString(powercapClass, parent, "name"); err != nil {
				continue
			}
		}
		mx, err := f.ReadString(powercapClass, e.Name(), "max_energy_range_uj")
		if err != nil {
			continue
		}
		if z.MaxUJ, err = strconv.ParseUint(mx, 10, 64); err != nil {
			continue
		}
		zones = append(zones, z)
	}
	slices.SortFunc(zones, func(a, b EnergyZone) int { return strings.Compare(a.ID, b.ID) })
	return zones, nil
}

// maxConstraints bounds the constraint_K enumeration.
const maxConstraints = 8

// PowercapZones lists the top-level RAPL zones (sub-zones such as
// intel-rapl:0:0, "core", are left out), sorted by directory name. No
// powercap directory gives an empty list.
func (f FS) PowercapZones() ([]PowercapZone, error) {
	entries, err := f.powercapEntries()
	if err != nil {
		return nil, err
	}
	var zones []PowercapZone
	var errs []error
	for _, e := range entries {
		id := e.Name()
		if _, parent, _ := powercapID(id); parent != "" {
			continue
		}
		r := optReader{fs: f, dir: powercapClass + "/" + id}
		z := PowercapZone{ID: id, Enabled: r.int("enabled")}
		if s := r.str("name"); s != nil {
			z.Name = *s
		}
		for k := 0; k < maxConstraints; k++ {
			pre := fmt.Sprintf("constraint_%d_", k)
			name := r.str(pre + "name")
			if name == nil {
				break
			}
			z.Constraints = append(z.Constraints, PowercapConstraint{
				Index: k, Name: *name,
				PowerLimitUW: r.int(pre + "power_limit_uw"),
				TimeWindowUS: r.int(pre + "time_window_us"),
				MaxPowerUW:   r.int(pre + "max_power_uw"),
			})
		}
		errs = append(errs, r.errs...)
		zones = append(zones, z)
	}
	slices.SortFunc(zones, func(a, b PowercapZone) int { return strings.Compare(a.ID, b.ID) })
	return zones, errors.Join(errs...)
}
