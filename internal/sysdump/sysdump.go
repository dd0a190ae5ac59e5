// SPDX-License-Identifier: Apache-2.0

// Package sysdump reads everything a settings change could leave behind,
// for tests that check a machine is back byte for byte: every file under
// /sys/devices/system/cpu and, on every online CPU, the request registers
// (regs.SettingAddresses: the request registers and EPB) through
// /dev/cpu/N/msr, read-only.
package sysdump

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
	"github.com/hwpprobe/hwpprobe/internal/machine/regs"
	"github.com/hwpprobe/hwpprobe/msr"
)

// Registers are the registers Dump reads on each CPU.
var Registers = regs.SettingAddresses()

// Dump returns path (relative to root) -> content for every regular file
// under sys/devices/system/cpu ("error: ..." for one that cannot be read,
// as an amd-pstate EPP outside its table), except what is measured rather
// than set: an emulated machine's register write log (sysfs.EmulatedWrites,
// a history), its closed loop's state (sysfs.EmulatedLoop, whose quota
// follows the load) and scaling_cur_freq (the delivered frequency, which
// moves with load and power limits), and "msr:cpuN:0xADDR" -> value for each of
// Registers a CPU has.
func Dump(root string) (map[string]string, error) {
	out := map[string]string{}
	base := filepath.Join(root, "sys/devices/system/cpu")
	err := filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if rel == sysfs.EmulatedWrites || rel == sysfs.EmulatedLoop || d.Name() == "scaling_cur_freq" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			out[rel] = "error: " + errors.Unwrap(err).Error()
			return nil
		}
		out[rel] = string(b)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sysdump: %w", err)
	}
	online, err := sysfs.NewFS(root).OnlineCPUs()
	if err != nil {
		return nil, fmt.Errorf("sysdump: %w", err)
	}
	dev := msr.Open(root)
	defer dev.Close()
	for _, c := range online {
		for _, r := range Registers {
			if v, err := dev.ReadMSR(c, r); err == nil {
				out[fmt.Sprintf("msr:cpu%d:%#x", c, r)] = fmt.Sprintf("%#x", v)
			}
		}
	}
	return out, nil
}
