// SPDX-License-Identifier: Apache-2.0

package emu

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/rapl"

	"github.com/hwpprobe/hwpprobe/internal/emu/vfs"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
)

// Tree returns the root of the machine's file tree, paths relative to
// "/": dev/cpu/N/{msr,cpuid}, sys/devices/system/cpu/..., sys/devices/
// cpu_core and cpu_atom, sys/class/powercap/..., proc/cpuinfo and
// proc/stat. The tree is built once; its files read and change the
// machine's live state.
func (m *Machine) Tree() *vfs.Dir {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tree == nil {
		m.tree = m.buildTree()
	}
	return m.tree
}

// ro returns a read-only file whose text f produces under the lock, after
// the counters are advanced.
func (m *Machine) ro(f func() string) *vfs.File {
	return &vfs.File{Mode: 0o444, Read: func() ([]byte, error) {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.advance()
		return []byte(f() + "\n"), nil
	}}
}

// rw returns a root-writable file; read may fail (EINVAL for an EPP the
// table does not name on AMD), write gets the raw buffer. The register
// writes a store makes are logged with the writing process (WriteBy; Write
// logs them with an unknown one).
func (m *Machine) rw(read func() (string, error), write func([]byte) error) *vfs.File {
	store := func(by vfs.Caller, b []byte) error {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.advance() // counters up to now under the old settings
		m.writes.writer = by
		defer func() { m.writes.writer = vfs.Caller{} }()
		return write(b)
	}
	return &vfs.File{Mode: 0o644,
		Read: func() ([]byte, error) {
			m.mu.Lock()
			defer m.mu.Unlock()
			m.advance()
			s, err := read()
			if err != nil {
				return nil, err
			}
			return []byte(s + "\n"), nil
		},
		Write:   func(b []byte) error { return store(vfs.Caller{}, b) },
		WriteBy: store,
	}
}

func itoa[T int | uint64](v T) string { return strconv.FormatUint(uint64(v), 10) }

func (m *Machine) procStatFile() *vfs.File {
	return &vfs.File{Mode: 0o444, Read: func() ([]byte, error) {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.advance()
		return []byte(m.procStat()), nil
	}}
}

// buildCapturedTree serves a description with files (a capture): those
// files verbatim and read-only (a write fails with EROFS: no kernel rule
// is applied to a capture), and the live files the model keeps: the
// /dev/cpu/N devices (the description's registers, counters that
// advance, its CPUID leaves), /proc/stat, the emulated marker and the
// model variant.
func (m *Machine) buildCapturedTree() *vfs.Dir {
	root := vfs.NewDir()
	for _, e := range m.desc.Files {
		switch {
		case e.Dir:
			root.MkdirAll(e.Path)
		case e.Link != "":
			root.Put(e.Path, &vfs.Symlink{Target: e.Link})
		default:
			mode, _ := strconv.ParseUint(e.Mode, 8, 32) // checked by ParseDescription
			content := []byte(e.Content)
			root.Put(e.Path, &vfs.File{Mode: os.FileMode(mode),
				Read:  func() ([]byte, error) { return content, nil },
				Write: func([]byte) error { return syscall.EROFS },
			})
		}
	}
	root.Put(sysfs.EmulatedMarker, vfs.Const(m.desc.Name))
	root.Put(LoopPath, m.loopFile())
	root.Put(VariantPath, vfs.Const(m.variant))
	root.Put("proc/stat", m.procStatFile())
	for _, c := range m.cpus {
		m.putDevices(root, c)
	}
	return root
}

func (m *Machine) buildTree() *vfs.Dir {
	d := m.desc
	if len(d.Files) > 0 {
		return m.buildCapturedTree()
	}
	root := vfs.NewDir()
	const cpuDir = "sys/devices/system/cpu/"
	all := make(cpus.List, len(m.cpus))
	for i := range all {
		all[i] = i
	}
	online := cpus.List(m.onlineCPUs())
	root.Put(sysfs.EmulatedMarker, vfs.Const(d.Name))
	root.Put(VariantPath, vfs.Const(m.variant))
	root.Put(WriteLogPath, &vfs.File{Mode: 0o444, Read: func() ([]byte, error) { return m.writeLogText(), nil }})
	root.Put(LoopPath, m.loopFile())
	root.Put(cpuDir+"online", vfs.Const(online.String()))
	root.Put(cpuDir+"present", vfs.Const(all.String()))
	root.Put(cpuDir+"possible", vfs.Const(all.String()))
	root.Put(cpuDir+"offline", vfs.Const(all.Minus(online).String()))
	kmax := d.KernelMax
	if kmax == 0 {
		kmax = 8191
	}
	root.Put(cpuDir+"kernel_max", vfs.Const(itoa(kmax)))
	// The cpufreq core registers this directory even with no driver
	// (empty then, as on the development VMs).
	root.MkdirAll(cpuDir + "cpufreq")
	root.Put("proc/cpuinfo", m.ro(m.cpuinfo))
	root.Put("proc/stat", m.procStatFile())

	hybrid := map[string]cpus.List{}
	for _, c := range m.cpus {
		dir := fmt.Sprintf("%scpu%d/", cpuDir, c.n)
		if c.n > 0 {
			root.Put(dir+"online", &vfs.File{Mode: 0o644,
				Read:  func() ([]byte, error) { return []byte(map[bool]string{true: "1\n", false: "0\n"}[c.online]), nil },
				Write: func([]byte) error { return syscall.EOPNOTSUPP }, // CPU hotplug is not emulated
			})
		}
		root.MkdirAll(dir)
		if c.ct.Sysfs != "" {
			hybrid[c.ct.Sysfs] = append(hybrid[c.ct.Sysfs], c.n)
		}
		m.putDevices(root, c)
		if !c.online {
			continue
		}
		m.putTopology(root, dir, c)
		m.putCaches(root, dir, c)
		if m.has("epb") {
			root.Put(dir+"power/energy_perf_bias", m.rw(
				func() (string, error) { return itoa(c.regs[msrEPB]), nil },
				func(b []byte) error { return m.storeEPB(c, b) }))
		}
		if d.Driver.Name != "" {
			root.Put(dir+"cpufreq", &vfs.Symlink{Target: fmt.Sprintf("../cpufreq/policy%d", c.n)})
			m.putPolicy(root, fmt.Sprintf("%scpufreq/policy%d/", cpuDir, c.n), c)
		}
	}
	for name, l := range hybrid {
		root.Put("sys/devices/"+name+"/cpus", vfs.Const(l.String()))
	}
	switch d.Driver.Name {
	case "intel_pstate":
		m.putIntelPstate(root, cpuDir+"intel_pstate/")
	case "amd-pstate-epp":
		root.Put(cpuDir+"amd_pstate/status", &vfs.File{Mode: 0o644,
			Read:  func() ([]byte, error) { return []byte(d.Driver.Status + "\n"), nil },
			Write: func([]byte) error { return syscall.EOPNOTSUPP }, // mode switches are not emulated
		})
		// Preferred-core ranking is not modelled: every core has the
		// same highest perf, as with prefcore disabled.
		root.Put(cpuDir+"amd_pstate/prefcore", vfs.Const("disabled"))
		root.Put(cpuDir+"cpufreq/boost", m.rw(func() (string, error) {
			return map[bool]string{true: "1", false: "0"}[m.boost], nil
		}, m.amdStoreBoost))
	}
	m.putPowercap(root)
	return root
}

// putDevices adds /dev/cpu/N/msr and cpuid with the drivers' read
// semantics: a read of a multiple of 8 (msr) or 16 (cpuid) bytes repeats
// the register at the offset (msr_read() and cpuid_read() do not advance
// the register); other sizes are EINVAL.
func (m *Machine) putDevices(root *vfs.Dir, c *cpu) {
	dir := fmt.Sprintf("dev/cpu/%d/", c.n)
	if slices.Contains(m.desc.Devices, "msr") {
		root.Put(dir+"msr", &vfs.Device{Mode: 0o600, ReadAt: func(p []byte, off int64) (int, error) {
			if len(p)%8 != 0 {
				return 0, syscall.EINVAL
			}
			n := 0
			for ; n < len(p); n += 8 {
				v, err := m.ReadMSR(c.n, uint32(off))
				if err != nil {
					if n == 0 {
						return 0, err
					}
					break
				}
				binary.LittleEndian.PutUint64(p[n:], v)
			}
			return n, nil
		}})
	}
	if slices.Contains(m.desc.Devices, "cpuid") {
		root.Put(dir+"cpuid", &vfs.Device{Mode: 0o600, ReadAt: func(p []byte, off int64) (int, error) {
			if len(p)%16 != 0 {
				return 0, syscall.EINVAL
			}
			for n := 0; n < len(p); n += 16 {
				r, err := m.CPUID(c.n, uint32(off), uint32(uint64(off)>>32))
				if err != nil {
					return 0, err
				}
				for i, v := range r {
					binary.LittleEndian.PutUint32(p[n+4*i:], v)
				}
			}
			return len(p), nil
		}})
	}
}

// cpumask formats a CPU list as the kernel's %*pb bitmap (32-bit words,
// comma separated, most significant first).
func cpumask(l cpus.List, ncpu int) string {
	v := new(big.Int)
	for _, c := range l {
		v.SetBit(v, c, 1)
	}
	words := (ncpu + 31) / 32
	parts := make([]string, words)
	for i := 0; i < words; i++ {
		w := new(big.Int).Rsh(v, uint(32*(words-1-i)))
		w.And(w, big.NewInt(0xffffffff))
		digits := 8
		if i == 0 && ncpu%32 != 0 {
			digits = (ncpu%32 + 3) / 4
		}
		parts[i] = fmt.Sprintf("%0*x", digits, w)
	}
	return strings.Join(parts, ",")
}

func (m *Machine) putTopology(root *vfs.Dir, dir string, c *cpu) {
	var core, pkg cpus.List
	for _, o := range m.cpus {
		if !o.online || o.pkg != c.pkg {
			continue
		}
		pkg = append(pkg, o.n)
		if o.core == c.core {
			core = append(core, o.n)
		}
	}
	n := len(m.cpus)
	t := dir + "topology/"
	for name, v := range map[string]string{
		"physical_package_id": itoa(c.pkg), "die_id": "0", "core_id": itoa(c.core), "cluster_id": itoa(c.core),
		"thread_siblings_list": core.String(), "thread_siblings": cpumask(core, n),
		"core_cpus_list": core.String(), "core_cpus": cpumask(core, n),
		"core_siblings_list": pkg.String(), "core_siblings": cpumask(pkg, n),
		"package_cpus_list": pkg.String(), "package_cpus": cpumask(pkg, n),
		"die_cpus_list": pkg.String(), "die_cpus": cpumask(pkg, n),
		"cluster_cpus_list": core.String(), "cluster_cpus": cpumask(core, n),
	} {
		root.Put(t+name, vfs.Const(v))
	}
}

func (m *Machine) putCaches(root *vfs.Dir, dir string, c *cpu) {
	for i, ca := range c.ct.Caches {
		sib := cpus.List(m.cacheSiblings(c, ca))
		sets := ca.SizeK * 1024 / (ca.Ways * 64)
		id := sib[0]
		x := fmt.Sprintf("%scache/index%d/", dir, i)
		for name, v := range map[string]string{
			"level": itoa(ca.Level), "type": ca.Type, "size": itoa(ca.SizeK) + "K",
			"ways_of_associativity": itoa(ca.Ways), "coherency_line_size": "64",
			"number_of_sets": itoa(sets), "physical_line_partition": "1", "id": itoa(id),
			"shared_cpu_list": sib.String(), "shared_cpu_map": cpumask(sib, len(m.cpus)),
		} {
			root.Put(x+name, vfs.Const(v))
		}
	}
}

// storeEPB is energy_perf_bias_store() (arch/x86/kernel/cpu/intel_epb.c):
// a name from energy_perf_strings or a number (kstrtou64 base 0) up to 15;
// bits 3:0 of IA32_ENERGY_PERF_BIAS are replaced.
func (m *Machine) storeEPB(c *cpu, b []byte) error {
	normal := uint8(m.desc.Driver.EPBNormal)
	if normal == 0 {
		normal = hwp.EPBNormalDefault
	}
	s := strings.TrimSuffix(string(b), "\n") // sysfs_match_string ignores one trailing newline
	val, ok := hwp.EPBValue(s, normal)
	if !ok {
		v, err := strconv.ParseUint(s, 0, 64)
		if err != nil || v > 15 {
			return syscall.EINVAL
		}
		val = uint8(v)
	}
	m.wrmsr(c, msrEPB, c.regs[msrEPB]&^0xf|uint64(val))
	return nil
}

func (m *Machine) putPolicy(root *vfs.Dir, dir string, c *cpu) {
	d := m.desc
	put := func(name string, f *vfs.File) { root.Put(dir+name, f) }
	put("affected_cpus", vfs.Const(itoa(c.n)))
	put("related_cpus", vfs.Const(itoa(c.n)))
	put("scaling_driver", vfs.Const(d.Driver.Name))
	put("scaling_available_governors", vfs.Const("performance powersave"))
	put("cpuinfo_transition_latency", vfs.Const("0"))
	// show_scaling_setspeed() for a setpolicy driver; store: EINVAL.
	put("scaling_setspeed", &vfs.File{Mode: 0o644,
		Read:  func() ([]byte, error) { return []byte("<unsupported>\n"), nil },
		Write: func([]byte) error { return syscall.EINVAL },
	})
	put("scaling_governor", m.rw(func() (string, error) { return c.governor, nil },
		func(b []byte) error { return m.storeGovernor(c, b) }))
	put("scaling_min_freq", m.rw(func() (string, error) { return itoa(c.polMin), nil },
		func(b []byte) error { return m.storeFreq(c, false, b) }))
	put("scaling_max_freq", m.rw(func() (string, error) { return itoa(c.polMax), nil },
		func(b []byte) error { return m.storeFreq(c, true, b) }))
	put("scaling_cur_freq", m.ro(func() string { return itoa(int(c.lastMHz * 1000)) }))
	if d.Driver.Name == "intel_pstate" {
		put("cpuinfo_min_freq", m.ro(func() string { return itoa(m.intelPstates(c).minFreq) }))
		put("cpuinfo_max_freq", m.ro(func() string { return itoa(m.intelCPUInfoMax(m.intelPstates(c))) }))
		// show_base_frequency() without ACPI CPPC: Guaranteed x scaling,
		// rounded down to 100 MHz on hybrid parts.
		put("base_frequency", m.ro(func() string { return itoa(m.intelPstates(c).maxFreq) }))
		if m.has("hwp_epp") {
			// show_energy_performance_available_preferences(): each
			// string followed by a space, then a newline.
			put("energy_performance_available_preferences", vfs.Const(strings.Join(energyPerfStrings, " ")+" "))
			put("energy_performance_preference", m.rw(func() (string, error) { return m.intelShowEPP(c), nil },
				func(b []byte) error { return m.intelStoreEPP(c, b) }))
		}
		return
	}
	put("cpuinfo_min_freq", m.ro(func() string { lo, _ := m.amdLimits(c); return itoa(lo) }))
	put("cpuinfo_max_freq", m.ro(func() string { _, hi := m.amdLimits(c); return itoa(hi) }))
	put("amd_pstate_max_freq", m.ro(func() string { return itoa(m.amdMaxFreq(c)) }))
	put("amd_pstate_lowest_nonlinear_freq", m.ro(func() string { return itoa(m.amdPerfToFreq(c, m.amdCaps(c).lowestNonlinear)) }))
	put("amd_pstate_highest_perf", m.ro(func() string { return itoa(m.amdCaps(c).highest) }))
	// Under performance only "performance" is offered.
	put("energy_performance_available_preferences", m.ro(func() string {
		if c.governor == "performance" {
			return "performance"
		}
		return strings.Join(energyPerfStrings, " ") + " "
	}))
	put("energy_performance_preference", m.rw(func() (string, error) { return m.amdShowEPP(c) },
		func(b []byte) error { return m.amdStoreEPP(c, b) }))
}

func (m *Machine) putIntelPstate(root *vfs.Dir, dir string) {
	g := &m.intel
	root.Put(dir+"status", &vfs.File{Mode: 0o644,
		Read:  func() ([]byte, error) { return []byte(m.desc.Driver.Status + "\n"), nil },
		Write: func([]byte) error { return syscall.EOPNOTSUPP }, // mode switches are not emulated
	})
	root.Put(dir+"no_turbo", m.rw(func() (string, error) {
		return map[bool]string{true: "1", false: "0"}[g.noTurbo], nil
	}, m.intelStoreNoTurbo))
	root.Put(dir+"min_perf_pct", m.rw(func() (string, error) { return itoa(g.minPerfPct), nil },
		func(b []byte) error { return m.intelStorePct(false, b) }))
	root.Put(dir+"max_perf_pct", m.rw(func() (string, error) { return itoa(g.maxPerfPct), nil },
		func(b []byte) error { return m.intelStorePct(true, b) }))
	root.Put(dir+"hwp_dynamic_boost", m.rw(func() (string, error) { return itoa(g.dynamicBoost), nil },
		func(b []byte) error {
			v, err := parseUint(b)
			if err != nil {
				return err
			}
			g.dynamicBoost = map[bool]int{true: 1, false: 0}[v != 0]
			return nil
		}))
}

// energyUJ converts a raw 32-bit energy count as intel_rapl_common.c's
// rapl_unit_xlate() does: raw x energy_unit / 1000, with energy_unit =
// 10^9 >> ESU truncated to an integer.
func (m *Machine) energyUJ(raw uint64) uint64 {
	unit := uint64(1e9) / uint64(1/m.energyUnit())
	return raw * unit / 1000
}

// putPowercap adds /sys/class/powercap: intel-rapl:P per package (name
// package-P) with sub-zones intel-rapl:P:K (core, uncore, dram) and, when
// the machine has psys, intel-rapl:<packages> named psys. energy_uj is
// the 32-bit counter in µJ, so it wraps at max_energy_range_uj.
func (m *Machine) putPowercap(root *vfs.Dir) {
	d := m.desc
	if len(d.RAPL.Domains) == 0 {
		return
	}
	const pc = "sys/class/powercap/"
	root.Put(pc+"intel-rapl/enabled", vfs.Const("1"))
	maxUJ := m.energyUJ(0xffffffff)
	zone := func(dir, name string, pkg int, dom string) {
		root.Put(dir+"name", vfs.Const(name))
		root.Put(dir+"enabled", vfs.Const("1"))
		root.Put(dir+"max_energy_range_uj", vfs.Const(itoa(maxUJ)))
		root.Put(dir+"energy_uj", m.ro(func() string {
			return itoa(m.energyUJ(uint64(uint32(m.energyJoules(pkg, dom) / m.energyUnit()))))
		}))
	}
	for p := range m.pkgs {
		top := fmt.Sprintf("intel-rapl:%d", p)
		zone(pc+top+"/", fmt.Sprintf("package-%d", p), p, "pkg")
		m.putConstraints(root, pc+top+"/", p)
		k := 0
		for _, dom := range d.RAPL.Domains {
			if dom == "pkg" || dom == "psys" {
				continue
			}
			sub := fmt.Sprintf("%s:%d", top, k)
			zone(pc+top+"/"+sub+"/", dom, p, dom)
			root.Put(pc+sub, &vfs.Symlink{Target: top + "/" + sub})
			k++
		}
	}
	if slices.Contains(d.RAPL.Domains, "psys") {
		zone(fmt.Sprintf("%sintel-rapl:%d/", pc, len(m.pkgs)), "psys", 0, "psys")
	}
}

// putConstraints adds constraint_0 (long_term, PL1) and constraint_1
// (short_term, PL2) decoded from MSR_PKG_POWER_LIMIT as intel_rapl_common.c
// does: power = raw x (10^6 >> PU) µW; time window = 2^Y x (4 + F) x
// time_unit / 4 µs with time_unit = 10^6 >> TU.
func (m *Machine) putConstraints(root *vfs.Dir, dir string, pkg int) {
	d := m.desc
	if d.RAPL.LimitMSR == 0 {
		return
	}
	c0 := m.cpus[0]
	for _, c := range m.cpus {
		if c.pkg == pkg {
			c0 = c
			break
		}
	}
	lim, _ := m.constMSR(c0, d.RAPL.LimitMSR)
	units, _ := m.constMSR(c0, d.RAPL.UnitMSR)
	info, _ := m.constMSR(c0, 0x614)
	powerUnit := uint64(1000000) >> (units & 0xf)
	for i, c := range rapl.PowercapConstraints(lim, units) {
		pre := fmt.Sprintf("%sconstraint_%d_", dir, i)
		root.Put(pre+"name", vfs.Const(c.Name))
		if m.pkgs[pkg].limits.has { // the model's register: writable as intel_rapl makes it
			m.putLiveConstraint(root, pre, pkg, i)
		} else {
			root.Put(pre+"power_limit_uw", vfs.Const(itoa(c.PowerLimitUW)))
			root.Put(pre+"time_window_us", vfs.Const(itoa(c.TimeWindowUS)))
		}
		maxP := info & 0x7fff // thermal spec power for PL1
		if i == 1 {
			maxP = info >> 32 & 0x7fff // maximum power for PL2
		}
		root.Put(pre+"max_power_uw", vfs.Const(itoa(maxP*powerUnit)))
	}
}
