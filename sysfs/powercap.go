// SPDX-License-Identifier: Apache-2.0

package sysfs

import (
	"errors"
	"fmt"
	"os"
	"slices"
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

// maxConstraints bounds the constraint_K enumeration.
const maxConstraints = 8

// PowercapZones lists the top-level RAPL zones (sub-zones such as
// intel-rapl:0:0, "core", are left out), sorted by directory name. No
// powercap directory gives an empty list.
func (f FS) PowercapZones() ([]PowercapZone, error) {
	const class = "sys/class/powercap"
	entries, err := os.ReadDir(f.Path(class))
	if IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var zones []PowercapZone
	var errs []error
	for _, e := range entries {
		id := e.Name()
		prefix, n, ok := strings.Cut(id, ":")
		if !ok || strings.Contains(n, ":") || (prefix != "intel-rapl" && prefix != "intel-rapl-mmio") {
			continue
		}
		r := optReader{fs: f, dir: class + "/" + id}
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
