// SPDX-License-Identifier: Apache-2.0

package words

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
)

// ContextRow is one labelled line of a context block.
type ContextRow struct{ Key, Value string }

// ContextBlock is one recording's context (recording.Context) as the
// reports print it: labelled lines, and the source they are of.
type ContextBlock struct {
	// Source names the file the block is of; "" when it is every
	// source's.
	Source string
	Rows   []ContextRow
}

// Of is " of SOURCE", or "" for a block of every source: the reports
// title a block "context" + Of.
func (b ContextBlock) Of() string {
	if b.Source == "" {
		return ""
	}
	return " of " + b.Source
}

// ContextBlocks words the contexts of the sources (one per source, nil
// for a file recorded without one): one block when there is one source or
// every source recorded the same, else one block per source.
func ContextBlocks(sources []string, ctxs []*recording.Context) []ContextBlock {
	if len(ctxs) == 0 {
		return nil
	}
	same := true
	for _, c := range ctxs[1:] {
		same = same && reflect.DeepEqual(c, ctxs[0])
	}
	if same {
		return []ContextBlock{{Rows: ContextRows(ctxs[0])}}
	}
	var out []ContextBlock
	for i, c := range ctxs {
		out = append(out, ContextBlock{Source: sources[i], Rows: ContextRows(c)})
	}
	return out
}

// ContextRows words one context; nil says it was not recorded.
func ContextRows(c *recording.Context) []ContextRow {
	if c == nil {
		return []ContextRow{{"context", "not recorded (the file was written by an hwpprobe that did not record it)"}}
	}
	rows := []ContextRow{
		{"power daemons", Daemons(c.Daemons)},
		{"platform profile", platformProfile(c)},
		{"power supply", powerSupply(c.PowerSupply)},
		{"firmware (DMI)", dmi(c.DMI)},
		{"kernel", Fact(c.KernelRelease)},
		{"kernel command line", Fact(c.KernelCmdline)},
		{"microcode", Fact(c.Microcode)},
	}
	if e := c.Emulator; e != nil {
		rows = append(rows, ContextRow{"hwpemu model variant", Fact(e.Variant)}, ContextRow{"hwpemu loop", Fact(e.Loop)})
	}
	return append(rows, ContextRow{"hwpprobe", orMissing(c.Hwpprobe)})
}

// Fact is a fact's value, or "missing (why)".
func Fact(f recording.Fact) string {
	if f.Missing != "" || f.Value == "" {
		return "missing (" + orMissing(f.Missing) + ")"
	}
	return f.Value
}

func orMissing(s string) string {
	if s == "" {
		return "not recorded"
	}
	return s
}

// Daemons words the power daemons found: "thermald (pid 812, thermald.service
// active): options --adaptive; tlp (no process, tlp.service active)", or
// "none found", followed by what could not be looked at.
func Daemons(l recording.DaemonList) string {
	var parts []string
	for _, d := range l.Found {
		var how []string
		if d.PID != 0 {
			how = append(how, fmt.Sprintf("pid %d", d.PID))
		} else {
			how = append(how, "no process")
		}
		if d.UnitState != "" {
			how = append(how, d.Unit+" "+d.UnitState)
		}
		s := d.Name + " (" + strings.Join(how, ", ") + ")"
		if d.Mode != nil {
			s += ": " + d.Mode.What + " " + Fact(d.Mode.Fact)
		}
		parts = append(parts, s)
	}
	out := "none found"
	if len(parts) > 0 {
		out = strings.Join(parts, "; ")
	}
	if l.ProcessesMissing != "" {
		out += "; processes not read (" + l.ProcessesMissing + ")"
	}
	if l.UnitsMissing != "" {
		out += "; systemd units not read (" + l.UnitsMissing + ")"
	}
	return out
}

func platformProfile(c *recording.Context) string {
	if c.PlatformProfile.Missing != "" && c.PlatformProfile.Missing == c.PlatformProfileChoices.Missing {
		return Fact(c.PlatformProfile)
	}
	return Fact(c.PlatformProfile) + " (choices: " + Fact(c.PlatformProfileChoices) + ")"
}

// powerSupply is "AC (Mains) online; BAT0 (Battery) present", "none", or
// "missing (why)".
func powerSupply(p recording.PowerSupply) string {
	if p.Missing != "" {
		return "missing (" + p.Missing + ")"
	}
	if len(p.Supplies) == 0 {
		return "none"
	}
	var parts []string
	for _, s := range p.Supplies {
		part := s.Name + " (" + s.Type + ")"
		switch {
		case s.Online != nil:
			part += " " + flag(*s.Online, "online", "offline", "online")
		case s.Present != nil:
			part += " " + flag(*s.Present, "present", "absent", "present")
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, "; ")
}

// flag words a 0/1 file: on for "1", off for "0", else "name VALUE" or
// "name missing (why)".
func flag(f recording.Fact, on, off, name string) string {
	switch {
	case f.Missing == "" && f.Value == "1":
		return on
	case f.Missing == "" && f.Value == "0":
		return off
	}
	return name + " " + Fact(f)
}

// dmi is "LENOVO 21HD, BIOS N3XET43W (1.18 ) of 05/12/2023", each part
// missing said so, or one "missing (why)" when every part is missing
// for the same reason.
func dmi(d recording.DMI) string {
	if m := d.Vendor.Missing; m != "" && d.Product.Missing == m && d.BIOSVersion.Missing == m && d.BIOSDate.Missing == m {
		return "missing (" + m + ")"
	}
	return fmt.Sprintf("vendor %s, product %s, BIOS %s of %s", Fact(d.Vendor), Fact(d.Product), Fact(d.BIOSVersion), Fact(d.BIOSDate))
}
