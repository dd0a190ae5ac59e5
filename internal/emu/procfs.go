// SPDX-License-Identifier: Apache-2.0

package emu

import (
	"fmt"
	"strings"
)

// cpuinfo renders /proc/cpuinfo as show_cpuinfo()
// (arch/x86/kernel/cpu/proc.c) prints it: one block per online CPU, each
// followed by an empty line. "cpu MHz" is the modelled delivered
// frequency (the kernel derives it from APERF/MPERF).
func (m *Machine) cpuinfo() string {
	d := m.desc
	var b strings.Builder
	perPkg := len(m.cpus) / d.Packages
	coresPerPkg := 0
	for _, g := range d.Cores {
		coresPerPkg += g.Count
	}
	for _, c := range m.cpus {
		if !c.online {
			continue
		}
		cacheK := 0
		for _, ca := range c.ct.Caches {
			if ca.Level >= 2 && ca.Type == "Unified" {
				cacheK = max(cacheK, ca.SizeK)
			}
		}
		fmt.Fprintf(&b, "processor\t: %d\n", c.n)
		fmt.Fprintf(&b, "vendor_id\t: %s\n", d.Vendor)
		fmt.Fprintf(&b, "cpu family\t: %d\n", d.Family)
		fmt.Fprintf(&b, "model\t\t: %d\n", d.Model)
		fmt.Fprintf(&b, "model name\t: %s\n", d.Brand)
		fmt.Fprintf(&b, "stepping\t: %d\n", d.Stepping)
		fmt.Fprintf(&b, "microcode\t: 0x%x\n", d.Microcode)
		fmt.Fprintf(&b, "cpu MHz\t\t: %.3f\n", c.lastMHz)
		fmt.Fprintf(&b, "cache size\t: %d KB\n", cacheK)
		fmt.Fprintf(&b, "physical id\t: %d\n", c.pkg)
		fmt.Fprintf(&b, "siblings\t: %d\n", perPkg)
		fmt.Fprintf(&b, "core id\t\t: %d\n", c.core)
		fmt.Fprintf(&b, "cpu cores\t: %d\n", coresPerPkg)
		fmt.Fprintf(&b, "apicid\t\t: %d\n", c.apic)
		fmt.Fprintf(&b, "initial apicid\t: %d\n", c.apic)
		b.WriteString("fpu\t\t: yes\nfpu_exception\t: yes\n")
		fmt.Fprintf(&b, "cpuid level\t: %d\n", d.CPUIDLevel)
		b.WriteString("wp\t\t: yes\n")
		fmt.Fprintf(&b, "flags\t\t: %s\n", strings.Join(d.Flags, " "))
		b.WriteString("bugs\t\t:\n")
		fmt.Fprintf(&b, "bogomips\t: %d.00\n", 2*d.TSCMHz)
		if d.Vendor == "AuthenticAMD" {
			b.WriteString("TLB size\t: 3584 4K pages\n")
		}
		b.WriteString("clflush size\t: 64\ncache_alignment\t: 64\n")
		fmt.Fprintf(&b, "address sizes\t: %s\n", d.AddressSizes)
		fmt.Fprintf(&b, "power management:%s\n\n", prefixSpace(d.PowerManagement))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func prefixSpace(s string) string {
	if s == "" {
		return ""
	}
	return " " + s
}

// userHZ is USER_HZ, the unit of /proc/stat times.
const userHZ = 100

// procStat renders /proc/stat as show_stat() (fs/proc/stat.c) prints it:
// the "cpu" sum line (two spaces after "cpu"), one cpuN line per online
// CPU with user nice system idle iowait irq softirq steal guest
// guest_nice in USER_HZ ticks, then intr, ctxt, btime, processes,
// procs_running, procs_blocked and softirq. Busy time is split 9:1
// between user and system (an assumption); the interrupt, context switch
// and process counts are synthetic, growing with time.
func (m *Machine) procStat() string {
	elapsed := m.last.Sub(m.boot).Seconds()
	type row struct{ user, system, idle uint64 }
	var rows []row
	var sum row
	var ids []int
	for _, c := range m.cpus {
		if !c.online {
			continue
		}
		busy := uint64(c.busySec * userHZ)
		r := row{user: busy * 9 / 10, idle: uint64(elapsed*userHZ) - min(busy, uint64(elapsed*userHZ))}
		r.system = busy - r.user
		rows = append(rows, r)
		ids = append(ids, c.n)
		sum.user += r.user
		sum.system += r.system
		sum.idle += r.idle
	}
	var b strings.Builder
	line := func(name string, r row) {
		fmt.Fprintf(&b, "%s %d 0 %d %d 0 0 0 0 0 0\n", name, r.user, r.system, r.idle)
	}
	line("cpu ", sum)
	for i, r := range rows {
		line(fmt.Sprintf("cpu%d", ids[i]), r)
	}
	n := float64(len(rows))
	fmt.Fprintf(&b, "intr %d\n", uint64(elapsed*250*n))
	fmt.Fprintf(&b, "ctxt %d\n", uint64(elapsed*100*n))
	fmt.Fprintf(&b, "btime %d\n", m.boot.Unix())
	fmt.Fprintf(&b, "processes %d\n", 1+uint64(elapsed))
	b.WriteString("procs_running 1\nprocs_blocked 0\n")
	fmt.Fprintf(&b, "softirq %d 0 0 0 0 0 0 0 0 0 0\n", uint64(elapsed*50*n))
	return b.String()
}
