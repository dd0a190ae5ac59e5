// SPDX-License-Identifier: Apache-2.0

package sysfs

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// CPUInfo is one processor's block of /proc/cpuinfo: the identity and the
// feature flags hwpprobe relies on. hwpprobe takes CPU features from here
// and from /dev/cpu/N/cpuid, never from the CPUID instruction of the CPU it
// happens to run on.
type CPUInfo struct {
	Processor  int      // "processor"
	VendorID   string   // "vendor_id": GenuineIntel, AuthenticAMD
	Family     int      // "cpu family"
	Model      int      // "model"
	Stepping   int      // "stepping"
	ModelName  string   // "model name"
	Microcode  string   // "microcode", as printed (hex)
	PhysicalID int      // "physical id"
	CoreID     int      // "core id"
	Flags      []string // "flags", sorted
}

// HasFlag reports whether the kernel lists flag (hwp, hwp_epp, epb,
// aperfmperf, hypervisor ...).
func (c CPUInfo) HasFlag(flag string) bool {
	_, ok := slices.BinarySearch(c.Flags, flag)
	return ok
}

// CPUInfo parses proc/cpuinfo under the root. Blocks are returned in file
// order, one per online CPU.
func (f FS) CPUInfo() ([]CPUInfo, error) {
	b, err := os.ReadFile(f.Path("proc/cpuinfo"))
	if err != nil {
		return nil, err
	}
	return ParseCPUInfo(b)
}

// ParseCPUInfo parses the x86 /proc/cpuinfo format
// (arch/x86/kernel/cpu/proc.c, show_cpuinfo()).
func ParseCPUInfo(b []byte) ([]CPUInfo, error) {
	var out []CPUInfo
	var cur *CPUInfo
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue // blank separator lines
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if key == "processor" {
			n, err := strconv.Atoi(val)
			if err != nil {
				return nil, fmt.Errorf("cpuinfo line %d: processor %q: %w", line, val, err)
			}
			out = append(out, CPUInfo{Processor: n, PhysicalID: -1, CoreID: -1})
			cur = &out[len(out)-1]
			continue
		}
		if cur == nil {
			continue
		}
		num := func(dst *int) error {
			n, err := strconv.Atoi(val)
			if err != nil {
				return fmt.Errorf("cpuinfo line %d: %s %q: %w", line, key, val, err)
			}
			*dst = n
			return nil
		}
		var err error
		switch key {
		case "vendor_id":
			cur.VendorID = val
		case "cpu family":
			err = num(&cur.Family)
		case "model":
			err = num(&cur.Model)
		case "stepping":
			err = num(&cur.Stepping)
		case "model name":
			cur.ModelName = val
		case "microcode":
			cur.Microcode = val
		case "physical id":
			err = num(&cur.PhysicalID)
		case "core id":
			err = num(&cur.CoreID)
		case "flags":
			cur.Flags = strings.Fields(val)
			slices.Sort(cur.Flags)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("cpuinfo: no processor entries")
	}
	return out, nil
}
