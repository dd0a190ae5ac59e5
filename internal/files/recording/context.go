// SPDX-License-Identifier: Apache-2.0

package recording

// Context is what surrounded a recording besides the settings it
// compares: the power daemons that also write them, the firmware's
// platform profile, the power supply, the machine's firmware identity,
// the kernel and its command line, the microcode and the hwpprobe that
// recorded it (meta's `context`, docs/recording-format.md). Every fact is
// read from the system; one that could not be read says why, and is
// never filled in.
type Context struct {
	Hwpprobe string     `json:"hwpprobe"` // the recording hwpprobe's version
	Daemons  DaemonList `json:"daemons"`
	// PlatformProfile and PlatformProfileChoices are the ACPI platform
	// profile (/sys/firmware/acpi/platform_profile) and the ones the
	// firmware offers (platform_profile_choices).
	PlatformProfile        Fact        `json:"platform_profile"`
	PlatformProfileChoices Fact        `json:"platform_profile_choices"`
	PowerSupply            PowerSupply `json:"power_supply"`
	DMI                    DMI         `json:"dmi"`
	KernelRelease          Fact        `json:"kernel_release"` // /proc/sys/kernel/osrelease
	KernelCmdline          Fact        `json:"kernel_cmdline"` // /proc/cmdline
	// Microcode is the first CPU's microcode revision: /proc/cpuinfo's
	// microcode, else /sys/devices/system/cpu/cpu0/microcode/version.
	Microcode Fact `json:"microcode"`
	// Emulator is what hwpemu said of the emulated machine the recording
	// was made on; nil on real hardware (and in files written before it
	// was recorded).
	Emulator *Emulator `json:"emulator,omitempty"`
}

// Emulator is hwpemu's model variant and loop, read from the emulated
// tree (sys/devices/system/cpu/hwpemu_variant and hwpemu_loop;
// docs/emulator.md).
type Emulator struct {
	// Variant is the model variant in force: none, min-pins, ...
	Variant Fact `json:"variant"`
	// Loop is "closed, slowdown S" (the command's CPU time held to the
	// model's delivered frequencies, S times slower than the model on
	// this host) or "open (REASON)" (it ran at the host's speed).
	Loop Fact `json:"loop"`
}

// Fact is one thing read from the system: its value, or why it is
// missing. Exactly one of the two is set.
type Fact struct {
	Value   string `json:"value,omitempty"`
	Missing string `json:"missing,omitempty"`
}

// DaemonList is the power daemons found running, by process
// (/proc/PID/comm and cmdline) or by their systemd unit's state.
type DaemonList struct {
	// Found are the daemons whose process runs or whose unit is active;
	// empty when none was found.
	Found []DaemonState `json:"found"`
	// ProcessesMissing says why no process list could be read (the
	// daemons' processes are then unknown); "" when it was read.
	ProcessesMissing string `json:"processes_missing,omitempty"`
	// UnitsMissing says why systemd's unit states could not be read;
	// "" when they were.
	UnitsMissing string `json:"units_missing,omitempty"`
}

// DaemonState is one power daemon found.
type DaemonState struct {
	Name string `json:"name"`          // as users know it: thermald, tuned, ...
	PID  int    `json:"pid,omitempty"` // its process; 0 when no process runs
	Unit string `json:"unit,omitempty"`
	// UnitState is "active" when systemd runs Unit, "inactive" when it
	// does not, "" when the unit states were not read.
	UnitState string `json:"unit_state,omitempty"`
	// Mode is what it is set to, for the daemons with one hwpprobe reads;
	// nil for the others.
	Mode *DaemonMode `json:"mode,omitempty"`
}

// DaemonMode is a daemon's mode: its profile (tuned, power-profiles-daemon)
// or its options (thermald).
type DaemonMode struct {
	What string `json:"what"` // "profile" or "options"
	Fact
}

// PowerSupply is /sys/class/power_supply.
type PowerSupply struct {
	Supplies []Supply `json:"supplies"`
	// Missing says why the supplies could not be listed; "" when they
	// were (an empty list: the machine has none).
	Missing string `json:"missing,omitempty"`
}

// Supply is one power supply: a mains adapter (type Mains or USB) with
// whether it is online, or a battery with whether it is present.
type Supply struct {
	Name    string `json:"name"` // AC, BAT0, ...
	Type    string `json:"type"` // its type file: Mains, USB, Battery, ...
	Online  *Fact  `json:"online,omitempty"`
	Present *Fact  `json:"present,omitempty"`
}

// DMI is the machine's firmware identity, /sys/class/dmi/id.
type DMI struct {
	Vendor      Fact `json:"sys_vendor"`
	Product     Fact `json:"product_name"`
	BIOSVersion Fact `json:"bios_version"`
	BIOSDate    Fact `json:"bios_date"`
}
