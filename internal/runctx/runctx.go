// SPDX-License-Identifier: Apache-2.0

// Package runctx reads the context of a recording (recording.Context):
// the power daemons that also write cpufreq settings, with their mode;
// the ACPI platform profile; the power supply; the firmware's identity;
// the kernel's release and command line; the microcode. Everything is
// read through a sysfs.FS, so tests point it at fixture trees and an
// emulated machine (hwpemu) is read as the programs under it see it.
// What cannot be read is said missing, with why; nothing is filled in.
package runctx

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
	"github.com/hwpprobe/hwpprobe/internal/emu/emuloop"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
)

// Paths read, relative to the system root.
const (
	UnitsDir           = "run/systemd/units"
	PlatformProfile    = "sys/firmware/acpi/platform_profile"
	PlatformChoices    = "sys/firmware/acpi/platform_profile_choices"
	PowerSupplyDir     = "sys/class/power_supply"
	DMIDir             = "sys/class/dmi/id"
	TunedActiveProfile = "etc/tuned/active_profile"
	PPDState           = "var/lib/power-profiles-daemon/state.ini"
)

// NotEmulated is why a fact of the real machine is not read under an
// emulated one: hwpemu emulates the CPUs, their registers and sysfs, and
// below the other paths programs see the host's files.
const NotEmulated = "not read under an emulated machine: it would be the host's"

// units are the systemd units of profile.Daemons, by daemon name.
var units = map[string]string{
	"tuned":                 "tuned.service",
	"power-profiles-daemon": "power-profiles-daemon.service",
	"thermald":              "thermald.service",
	"tlp":                   "tlp.service",
	"auto-cpufreq":          "auto-cpufreq.service",
	"system76-power":        "com.system76.PowerDaemon.service",
}

// Read reads the context under fs; version is hwpprobe's. It also returns
// the daemons whose process runs (profile.DetectDaemons), which diff
// refuses to run beside.
func Read(fsys sysfs.FS, version string) (recording.Context, []profile.Running) {
	emulated := fsys.Emulated() != ""
	running := profile.DetectDaemons(fsys)
	c := recording.Context{Hwpprobe: version, Daemons: daemons(fsys, running, emulated),
		KernelRelease: fact(fsys, "proc/sys/kernel/osrelease"), KernelCmdline: fact(fsys, "proc/cmdline"),
		Microcode: microcode(fsys)}
	if emulated {
		missing := recording.Fact{Missing: NotEmulated}
		c.PlatformProfile, c.PlatformProfileChoices = missing, missing
		c.PowerSupply.Missing = NotEmulated
		c.DMI = recording.DMI{Vendor: missing, Product: missing, BIOSVersion: missing, BIOSDate: missing}
		c.Emulator = &recording.Emulator{Variant: fact(fsys, sysfs.EmulatedVariant), Loop: loop(fsys)}
		return c, running
	}
	c.PlatformProfile, c.PlatformProfileChoices = fact(fsys, PlatformProfile), fact(fsys, PlatformChoices)
	c.PowerSupply = powerSupply(fsys)
	c.DMI = recording.DMI{Vendor: fact(fsys, DMIDir, "sys_vendor"), Product: fact(fsys, DMIDir, "product_name"),
		BIOSVersion: fact(fsys, DMIDir, "bios_version"), BIOSDate: fact(fsys, DMIDir, "bios_date")}
	return c, running
}

// loop reads hwpemu's loop file (internal/emu/emuloop): its summary, or why
// it is missing.
func loop(fsys sysfs.FS) recording.Fact {
	l, ok, err := emuloop.Read(fsys)
	switch {
	case err != nil:
		return recording.Fact{Missing: err.Error()}
	case !ok:
		return recording.Fact{Missing: "not present"}
	}
	return recording.Fact{Value: l.Summary()}
}

// fact reads one file: its trimmed text, or why it is missing.
func fact(fsys sysfs.FS, elem ...string) recording.Fact {
	s, err := fsys.ReadString(elem...)
	if err != nil {
		return recording.Fact{Missing: why(err)}
	}
	if s == "" {
		return recording.Fact{Missing: "empty"}
	}
	return recording.Fact{Value: s}
}

// why words a read error without the root's path: "not present", or the
// system's reason ("permission denied").
func why(err error) string {
	if sysfs.IsNotExist(err) {
		return "not present"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// daemons finds the daemons of profile.Daemons whose process runs
// (running) or whose systemd unit is active, with their modes. Under an
// emulated machine the host's units are not read: they cannot write its
// settings.
func daemons(fsys sysfs.FS, running []profile.Running, emulated bool) recording.DaemonList {
	var l recording.DaemonList
	l.ProcessesMissing = processList(fsys)
	var unitDir []os.DirEntry
	if emulated {
		l.UnitsMissing = "not read under an emulated machine: the host's units do not write its settings"
	} else if ents, err := os.ReadDir(fsys.Path(UnitsDir)); err != nil {
		l.UnitsMissing = why(err)
	} else {
		unitDir = ents
	}
	for _, d := range profile.Daemons {
		st := recording.DaemonState{Name: d.Name, Unit: units[d.Name]}
		if i := slices.IndexFunc(running, func(r profile.Running) bool { return r.Name == d.Name }); i >= 0 {
			st.PID = running[i].PID
		}
		if l.UnitsMissing == "" {
			// systemd keeps invocation:UNIT while the unit is active (or
			// starting, reloading, stopping), and removes it once the
			// unit is inactive or failed.
			st.UnitState = "inactive"
			if slices.ContainsFunc(unitDir, func(e os.DirEntry) bool { return e.Name() == "invocation:"+st.Unit }) {
				st.UnitState = "active"
			}
		}
		if st.PID == 0 && st.UnitState != "active" {
			continue
		}
		st.Mode = mode(fsys, d.Name, st.PID)
		l.Found = append(l.Found, st)
	}
	return l
}

// processList says why the process list under fsys cannot be read, ""
// when it can: a /proc that lists no process is not a process list (an
// emulated tree served by `hwpemu serve` has only cpuinfo and stat).
func processList(fsys sysfs.FS) string {
	ents, err := os.ReadDir(fsys.Path("proc"))
	if err != nil {
		return why(err)
	}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err == nil {
			return ""
		}
	}
	return "no process listed under proc"
}

// mode reads a daemon's mode: tuned's active profile, ppd's profile from
// its state file, thermald's options from its command line; nil for a
// daemon without one hwpprobe reads.
func mode(fsys sysfs.FS, name string, pid int) *recording.DaemonMode {
	switch name {
	case "tuned":
		return &recording.DaemonMode{What: "profile", Fact: fact(fsys, TunedActiveProfile)}
	case "power-profiles-daemon":
		return &recording.DaemonMode{What: "profile", Fact: ppdProfile(fsys)}
	case "thermald":
		if pid == 0 {
			return &recording.DaemonMode{What: "options", Fact: recording.Fact{Missing: "no process to read them from"}}
		}
		return &recording.DaemonMode{What: "options", Fact: options(fsys, pid)}
	}
	return nil
}

// ppdProfile reads the Profile key of power-profiles-daemon's state file
// ("[State]" then "Driver=...", "Profile=balanced").
func ppdProfile(fsys sysfs.FS) recording.Fact {
	f, err := os.Open(fsys.Path(PPDState))
	if err != nil {
		return recording.Fact{Missing: why(err)}
	}
	defer f.Close()
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			section = line
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok && section == "[State]" && strings.TrimSpace(k) == "Profile" {
			if v = strings.TrimSpace(v); v != "" {
				return recording.Fact{Value: v}
			}
			return recording.Fact{Missing: "empty Profile in state.ini"}
		}
	}
	if err := sc.Err(); err != nil {
		return recording.Fact{Missing: why(err)}
	}
	return recording.Fact{Missing: "no Profile in state.ini's [State]"}
}

// options reads a process's arguments after its program name, space
// separated; "none" when it has none.
func options(fsys sysfs.FS, pid int) recording.Fact {
	b, err := os.ReadFile(fsys.Path("proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return recording.Fact{Missing: why(err)}
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	if len(args) < 2 {
		return recording.Fact{Value: "none"}
	}
	return recording.Fact{Value: strings.Join(args[1:], " ")}
}

// microcode reads the first CPU's microcode revision from /proc/cpuinfo,
// else from cpu0's microcode/version.
func microcode(fsys sysfs.FS) recording.Fact {
	infos, err := fsys.CPUInfo()
	if err == nil && len(infos) > 0 && infos[0].Microcode != "" {
		return recording.Fact{Value: infos[0].Microcode}
	}
	f := fact(fsys, "sys/devices/system/cpu/cpu0/microcode/version")
	if f.Missing != "" {
		f.Missing = "not in /proc/cpuinfo; cpu0/microcode/version " + f.Missing
	}
	return f
}

// powerSupply lists /sys/class/power_supply: each supply's type, and
// whether a mains adapter (Mains, USB) is online and a battery present.
func powerSupply(fsys sysfs.FS) recording.PowerSupply {
	ents, err := os.ReadDir(fsys.Path(PowerSupplyDir))
	if err != nil {
		return recording.PowerSupply{Missing: why(err)}
	}
	ps := recording.PowerSupply{Supplies: []recording.Supply{}}
	for _, e := range ents {
		s := recording.Supply{Name: e.Name()}
		t := fact(fsys, PowerSupplyDir, e.Name(), "type")
		s.Type = t.Value
		if t.Missing != "" {
			s.Type = "(type " + t.Missing + ")"
		}
		switch t.Value {
		case "Mains", "USB":
			f := fact(fsys, PowerSupplyDir, e.Name(), "online")
			s.Online = &f
		case "Battery":
			f := fact(fsys, PowerSupplyDir, e.Name(), "present")
			s.Present = &f
		}
		ps.Supplies = append(ps.Supplies, s)
	}
	return ps
}
