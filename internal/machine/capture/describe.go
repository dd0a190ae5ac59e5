// SPDX-License-Identifier: Apache-2.0

package capture

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/emu"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
)

// cpuinfoFields is the first processor block of /proc/cpuinfo, by key.
type cpuinfoFields map[string]string

// cpuinfo reads /proc/cpuinfo, keeps it verbatim and returns its first
// block's fields.
func (c *capturer) cpuinfo() (cpuinfoFields, error) {
	b, _, err := readFile(c.path("proc/cpuinfo"))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoCPUInfo, err)
	}
	c.files = append(c.files, emu.FileEntry{Path: "proc/cpuinfo", Mode: "0444", Content: string(b)})
	f := cpuinfoFields{}
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" && len(f) > 0 {
			break
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			f[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	for _, k := range []string{"vendor_id", "cpu family", "model", "bogomips"} {
		if f[k] == "" {
			return nil, fmt.Errorf("%w: no %q line", ErrNoCPUInfo, k)
		}
	}
	return f, nil
}

func (f cpuinfoFields) int(key string) int {
	v, err := strconv.ParseInt(f[key], 0, 64)
	if err != nil {
		return 0
	}
	return int(v)
}

// describe fills the model's fields: identity from /proc/cpuinfo, the CPU
// count, the registers and the CPUID leaves. The model applies no kernel
// rule to a capture (no driver) and serves its files verbatim; its cores
// only count the CPUs.
func (c *capturer) describe(d *emu.Description, info cpuinfoFields, present, online cpus.List) error {
	host := d.Captured.Host
	d.Name = "captured-" + sanitize(host)
	d.Summary = fmt.Sprintf("captured from %s (kernel %s) on %s", host, strings.Fields(d.Captured.Kernel + " ?")[0], d.Captured.Date)
	if e := d.Captured.Emulated; e != "" {
		d.Name = "captured-" + sanitize(e)
		d.Summary = fmt.Sprintf("captured from the emulated machine %s (hwpemu on %s) on %s", e, host, d.Captured.Date)
	}
	d.Vendor = info["vendor_id"]
	d.Family, d.Model, d.Stepping = info.int("cpu family"), info.int("model"), info.int("stepping")
	d.Microcode = uint32(info.int("microcode"))
	d.Brand = info["model name"]
	d.CPUIDLevel = info.int("cpuid level")
	d.AddressSizes = info["address sizes"]
	d.Flags = strings.Fields(info["flags"])
	d.PowerManagement = info["power management"]
	d.Hypervisor = slices.Contains(d.Flags, "hypervisor")
	bogo, _ := strconv.ParseFloat(info["bogomips"], 64)
	// bogomips is 2 x the TSC rate (loops_per_jiffy calibrated from
	// tsc_khz): the model's TSC, MPERF and APERF count at this rate.
	d.TSCMHz = int(math.Round(bogo / 2))
	d.BusMHz = 100 // the model uses it only for CPUID 0x15, served verbatim here
	if b, _, err := readFile(c.path(cpuDir + "/kernel_max")); err == nil {
		d.KernelMax, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if len(present) == 0 || present[0] != 0 || present[len(present)-1] != len(present)-1 {
		return fmt.Errorf("capture: present CPUs %s: want 0-N without gaps", present)
	}
	d.Packages = 1
	d.Cores = []emu.CoreGroup{{Type: "cpu", Count: len(present), Threads: 1}}
	d.CoreTypes = map[string]*emu.CoreType{"cpu": {}}
	d.Offline = present.Minus(online)
	if len(d.Offline) == 0 {
		d.Offline = nil
	}
	leaves, haveCPUID := c.cpuid(d.Hypervisor)
	if haveCPUID {
		d.Devices = append(d.Devices, "cpuid")
		d.CPUID = leaves
		if ebx, ecx, ok := leaf16(leaves); ok {
			d.MaxMHz, d.BusMHz = ebx, max(ecx, 1)
		}
	}
	regs, haveMSR := c.msrs()
	if haveMSR {
		d.Devices = append(d.Devices, "msr")
		d.MSRs = regs
	}
	return nil
}

// leaf16 returns CPUID 0x16 EBX (maximum MHz) and ECX (bus MHz) of the
// first CPU that answers it.
func leaf16(leaves []emu.CPUIDEntry) (ebx, ecx int, ok bool) {
	for _, e := range leaves {
		if e.Leaf == 0x16 && e.Regs[0] != 0 {
			return int(e.Regs[1]), int(e.Regs[2]), true
		}
	}
	return 0, 0, false
}

// sanitize keeps a host name's letters, digits, dots and dashes.
func sanitize(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x80 && (r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return r
		}
		return '_'
	}, s)
	if s == "" {
		return "unknown"
	}
	return s
}
