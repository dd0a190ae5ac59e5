// SPDX-License-Identifier: Apache-2.0

package profile

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/internal/machine/regs"
	"github.com/hwpprobe/hwpprobe/internal/machine/snapshot"
)

// Verification is what the hardware holds after a profile, per core type,
// next to what the profile asked for.
type Verification struct {
	Profile  string `json:"profile"`
	Emulated string `json:"emulated,omitempty"`
	// Refused is the refusal (the planner's or the kernel's) when the
	// profile could not be applied; Rows then show the settings as they
	// stayed.
	Refused string `json:"refused,omitempty"`
	Rows    []Row  `json:"rows"`
	// Unreadable says why the registers could not be read, if they could
	// not (Row register fields are then null).
	Unreadable string `json:"registers_unreadable,omitempty"`
}

// Row is the CPUs of one core type that ended up alike.
type Row struct {
	CoreType string `json:"core_type"`
	CPUs     string `json:"cpus"`
	// Asked is what the profile asked for these CPUs (governor, epp, epb,
	// scaling_min_freq, scaling_max_freq).
	Asked map[Key]string `json:"asked,omitempty"`
	// Governor, EPP and EPB are what sysfs shows now.
	Governor string `json:"governor,omitempty"`
	EPP      string `json:"epp,omitempty"`
	// Register is the catalog name of the request register read
	// (snapshot.CPURegs.Request); "" when none could be read.
	Register string `json:"register,omitempty"`
	Min      *int   `json:"min"`
	Max      *int   `json:"max"`
	Desired  *int   `json:"desired"`
	RegEPP   *int   `json:"reg_epp"`
	EPB      *int   `json:"epb"` // IA32_ENERGY_PERF_BIAS bits 3:0
	// Notes give the kernel rule behind each place where the registers
	// are not simply what was asked.
	Notes []string `json:"notes,omitempty"`
}

// Verify reads the machine after p was applied (a snapshot: sysfs and the
// registers, read-only) and returns per core type what the hardware holds
// next to what p asked, with the rules behind the differences.
func Verify(src snapshot.Sources, m *Machine, p *Profile) (*Verification, error) {
	s, err := snapshot.Build(src, "")
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	v := &Verification{Profile: p.String(), Emulated: s.Emulated}
	for _, g := range s.Groups {
		var rows []Row
		for _, c := range g.CPUs {
			r := verifyCPU(m, p, c)
			r.CoreType = g.CoreType
			if i := slices.IndexFunc(rows, func(o Row) bool { return sameRow(o, r) }); i >= 0 {
				rows[i].CPUs = addCPU(rows[i].CPUs, c.CPU)
				continue
			}
			r.CPUs = strconv.Itoa(c.CPU)
			rows = append(rows, r)
		}
		v.Rows = append(v.Rows, rows...)
	}
	for _, c := range s.Capabilities {
		if c.Name == "msr" && !c.Available {
			v.Unreadable = c.Detail
		}
	}
	return v, nil
}

func sameRow(a, b Row) bool {
	return fmt.Sprint(derefRow(a)) == fmt.Sprint(derefRow(b))
}

// derefRow is a row with pointers replaced by their values, for comparing.
func derefRow(r Row) []any {
	d := func(p *int) any {
		if p == nil {
			return nil
		}
		return *p
	}
	return []any{r.CoreType, r.Asked, r.Governor, r.EPP, r.Register, d(r.Min), d(r.Max), d(r.Desired), d(r.RegEPP), d(r.EPB), r.Notes}
}

func addCPU(list string, cpu int) string {
	l, _ := cpus.Parse(list)
	return append(l, cpu).String()
}

func intp(v uint8) *int { n := int(v); return &n }

// verifyCPU builds one CPU's row.
func verifyCPU(m *Machine, p *Profile, c snapshot.CPU) Row {
	r := Row{Asked: map[Key]string{}}
	for _, k := range []Key{Governor, EPP, EPB, ScalingMinFreq, ScalingMaxFreq} {
		if v, ok := p.For(k, c.CPU); ok {
			r.Asked[k] = v
		}
	}
	if len(r.Asked) == 0 {
		r.Asked = nil
	}
	if g := c.Sysfs.ScalingGovernor; g != nil {
		r.Governor = *g
	}
	if e := c.Sysfs.EPP; e != nil {
		r.EPP = *e
	}
	if q, ok := c.Registers.Request(); ok {
		r.Register, r.Min, r.Max, r.Desired, r.RegEPP = q.Register.Name, intp(q.Min), intp(q.Max), intp(q.Desired), intp(q.EPP)
	}
	if e := c.Registers.EPB; e != nil {
		r.EPB = intp(e.Value)
	}
	r.Notes = notes(m, r, c)
	return r
}

// notes explains the registers by the kernel's rules.
func notes(m *Machine, r Row, c snapshot.CPU) []string {
	var out []string
	if g, ok := r.Asked[Governor]; ok && g != r.Governor {
		out = append(out, fmt.Sprintf("governor %s, not the %s asked", orNone(r.Governor), g))
	}
	amd := r.Register == regs.RequestOf(regs.AMD).Name
	if r.Governor == "performance" && r.Min != nil {
		switch {
		case !amd && *r.Min == *r.Max:
			out = append(out, fmt.Sprintf("min = max = %d: intel_pstate_hwp_set() sets the HWP minimum to the maximum under the performance policy", *r.Max))
		case amd && c.Registers.CPPCCap1 != nil && *r.Min == int(c.Registers.CPPCCap1.Nominal):
			out = append(out, fmt.Sprintf("min = nominal perf %d, not max %d: amd-pstate under performance uses min(nominal, max) since commit 0c411b39e4f4", *r.Min, *r.Max))
		}
		if *r.RegEPP == 0 {
			out = append(out, "EPP 0: written on switching into the performance policy (the previous EPP is saved and written back on leaving it while the EPP is still 0)")
		}
	}
	if want, ok := r.Asked[EPP]; ok && r.RegEPP != nil {
		val, known := m.EPPTable.Value(want)
		_, numeric := intValue(want)
		switch {
		case known && int(val) != *r.RegEPP:
			out = append(out, fmt.Sprintf("EPP %d, not the %d that epp=%s gives (%s): another writer?", *r.RegEPP, val, want, m.EPPTable.Source))
		case known && !numeric:
			out = append(out, fmt.Sprintf("epp=%s is EPP %d on this model (%s)", want, val, m.EPPTable.Source))
		}
	}
	if want, ok := r.Asked[EPB]; ok && r.EPB != nil {
		if val := m.EPBValue(want); int(val) != *r.EPB {
			out = append(out, fmt.Sprintf("EPB %d, not the %d that epb=%s gives (arch/x86/kernel/cpu/intel_epb.c): another writer?", *r.EPB, val, want))
		}
	}
	return out
}

// EPBValue is the IA32_ENERGY_PERF_BIAS value that epb=want gives on this
// machine: a name's value (arch/x86/kernel/cpu/intel_epb.c; "normal"
// depends on the model) or the number itself.
func (m *Machine) EPBValue(want string) uint8 {
	val, isName := hwp.EPBValue(want, hwp.EPBNormal(uint32(m.Family), uint32(m.Model)))
	if !isName {
		n, _ := strconv.Atoi(want)
		val = uint8(n)
	}
	return val
}
