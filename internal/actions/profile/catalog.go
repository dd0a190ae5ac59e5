// SPDX-License-Identifier: Apache-2.0

package profile

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
)

// Catalog is what profiles can name on this machine (`hwpprobe profiles`).
type Catalog struct {
	Emulated  string   `json:"emulated,omitempty"`
	Driver    string   `json:"driver"`
	Governors []string `json:"governors"`
	// EPPs maps each energy_performance_preference string offered to the
	// register value the kernel writes for it on this model (-1: not
	// known, "default" is the boot-time EPP).
	EPPs     []NamedValue `json:"epps"`
	EPPTable string       `json:"epp_table"`
	EPBs     []NamedValue `json:"epbs"` // nil without energy_perf_bias
	Globals  []string     `json:"globals"`
	Tuned    []string     `json:"tuned"` // TuneD profiles installed (directories with tuned.conf)
	PPD      []string     `json:"ppd"`   // power-profiles-daemon profiles when powerprofilesctl is installed
}

// NamedValue is a sysfs string and its register value.
type NamedValue struct {
	Name  string `json:"name"`
	Value int    `json:"value"`
}

// tunedDirs are where TuneD keeps its profiles (system, then local).
var tunedDirs = []string{"usr/lib/tuned", "usr/lib/tuned/profiles", "etc/tuned", "etc/tuned/profiles"}

// ReadCatalog reads what the machine offers.
func ReadCatalog(fs sysfs.FS) (*Catalog, error) {
	m, err := ReadMachine(fs)
	if err != nil {
		return nil, err
	}
	c := &Catalog{Emulated: fs.Emulated(), Driver: m.Driver, EPPTable: m.EPPTable.Source}
	if len(m.Online) > 0 {
		o := m.Offers[m.Online[0]]
		c.Governors = o.Governors
		for _, name := range o.EPPs {
			v, ok := m.EPPTable.Value(name)
			n := int(v)
			if !ok {
				n = -1
			}
			c.EPPs = append(c.EPPs, NamedValue{name, n})
		}
		if o.HasEPB {
			normal := hwp.EPBNormal(uint32(m.Family), uint32(m.Model))
			for _, name := range EPBNames {
				v, _ := hwp.EPBValue(name, normal)
				c.EPBs = append(c.EPBs, NamedValue{name, int(v)})
			}
		}
	}
	for _, k := range globalKeys {
		if v, ok := m.State.Globals[k]; ok {
			c.Globals = append(c.Globals, fmt.Sprintf("%s (now %s)", k, v))
		}
	}
	for _, d := range tunedDirs {
		ents, _ := os.ReadDir(fs.Path(d))
		for _, e := range ents {
			if fs.Exists(filepath.Join(d, e.Name(), "tuned.conf")) && !slices.Contains(c.Tuned, e.Name()) {
				c.Tuned = append(c.Tuned, e.Name())
			}
		}
	}
	slices.Sort(c.Tuned)
	if _, err := exec.LookPath("powerprofilesctl"); err == nil {
		c.PPD = PPDProfiles
	}
	return c, nil
}

// WriteCatalog prints a catalog.
func WriteCatalog(w io.Writer, c *Catalog) {
	if c.Emulated != "" {
		fmt.Fprintf(w, "EMULATED: machine %q (hwpemu)\n", c.Emulated)
	}
	fmt.Fprintf(w, "driver: %s\n", orDash(c.Driver))
	fmt.Fprintf(w, "governors: %s\n", orDash(strings.Join(c.Governors, " ")))
	if len(c.EPPs) > 0 {
		fmt.Fprintf(w, "epp (energy_performance_preference -> register EPP, %s; or 0-255 on intel_pstate):\n", c.EPPTable)
		for _, e := range c.EPPs {
			if e.Value < 0 {
				fmt.Fprintf(w, "  %-20s the EPP at boot\n", e.Name)
				continue
			}
			fmt.Fprintf(w, "  %-20s %d\n", e.Name, e.Value)
		}
	} else {
		fmt.Fprintln(w, "epp: none (no energy_performance_preference)")
	}
	if len(c.EPBs) > 0 {
		fmt.Fprintln(w, "epb (energy_perf_bias, 0-15; names from arch/x86/kernel/cpu/intel_epb.c):")
		for _, e := range c.EPBs {
			fmt.Fprintf(w, "  %-20s %d\n", e.Name, e.Value)
		}
	} else {
		fmt.Fprintln(w, "epb: none (no energy_perf_bias)")
	}
	fmt.Fprintf(w, "global settings: %s\n", orDash(strings.Join(c.Globals, ", ")))
	fmt.Fprintf(w, "tuned: profiles: %s\n", orDash(strings.Join(c.Tuned, " ")))
	fmt.Fprintf(w, "ppd: profiles: %s\n", orDash(strings.Join(c.PPD, " ")))
}
