// SPDX-License-Identifier: Apache-2.0

// Package emu models emulated machines for hwpprobe's end-to-end tests and
// for trying the tool without the hardware: a machine description
// (emu/machines/*.yaml) becomes a file tree (package vfs) with
// /dev/cpu/N/msr and cpuid devices, the cpufreq, intel_pstate, amd_pstate,
// topology and powercap sysfs files, and /proc/cpuinfo and /proc/stat.
// Writes to sysfs follow the kernel's rules (intel_pstate.c, amd-pstate.c,
// intel_epb.c); counters (TSC, APERF, MPERF, RAPL energy) are computed from
// an injectable clock on each read, with no goroutine. docs/emulator.md
// documents the format, the rules and the power model.
package emu

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/rapl"

	"github.com/hwpprobe/hwpprobe/internal/emu/vfs"
)

//go:embed machines/*.yaml
var builtin embed.FS

// ErrUnknownMachine is wrapped when a name is neither a built-in machine
// nor a readable file.
var ErrUnknownMachine = errors.New("unknown machine")

// Names returns the built-in machine names, sorted.
func Names() []string {
	ents, _ := fs.ReadDir(builtin, "machines")
	var names []string
	for _, e := range ents {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	slices.Sort(names)
	return names
}

// Option configures a Machine.
type Option func(*Machine)

// WithClock sets the clock the counters follow (default time.Now).
func WithClock(now func() time.Time) Option { return func(m *Machine) { m.now = now } }

// WithLoad sets where the busy fraction of each CPU comes from (default:
// the host's /proc/stat through NewHostLoad, opened when the machine is
// created: create it before mounting the emulated /proc/stat).
func WithLoad(l LoadSource) Option { return func(m *Machine) { m.load = l } }

// WithTimeScale divides the power-limit time windows (and the thermal
// time constants) by scale, so that a test sees in seconds what takes
// minutes (default 1; values <= 0 mean 1).
func WithTimeScale(scale float64) Option { return func(m *Machine) { m.timeScale = scale } }

// WithEnergyStart sets the energy, in joules, every RAPL domain has
// consumed at start, so that a test sees the 32-bit counters wrap soon
// (default 0).
func WithEnergyStart(joules float64) Option { return func(m *Machine) { m.energyStart = joules } }

// MaxDescriptionBytes bounds the size of a description file (captures of
// large servers run to a few MiB).
const MaxDescriptionBytes = 64 << 20

// Errors about a description file itself; both wrap ErrDescription.
var (
	ErrNotRegular = fmt.Errorf("not a regular file (a machine description is a YAML file): %w", ErrDescription)
	ErrTooLarge   = fmt.Errorf("larger than %d MiB: %w", MaxDescriptionBytes>>20, ErrDescription)
)

// Load returns a machine: a built-in name (see Names) or the path of a
// YAML description, read from a regular file of at most
// MaxDescriptionBytes.
func Load(nameOrPath string, opts ...Option) (*Machine, error) {
	file := path.Join("machines", nameOrPath+".yaml")
	data, err := builtin.ReadFile(file)
	if err != nil {
		if !strings.ContainsAny(nameOrPath, "/.") {
			return nil, fmt.Errorf("%w %q (built-in: %s)", ErrUnknownMachine, nameOrPath, strings.Join(Names(), ", "))
		}
		file = nameOrPath
		if data, err = ReadDescriptionFile(nameOrPath); err != nil {
			return nil, err
		}
	}
	d, err := ParseDescription(data)
	var de *DescriptionError
	if errors.As(err, &de) {
		de.File = file
	}
	if err != nil {
		return nil, err
	}
	return New(d, opts...)
}

// ReadDescriptionFile reads a description from the regular file at p:
// a FIFO, a device or a directory is ErrNotRegular (and is never read,
// nor waited on), a file over MaxDescriptionBytes ErrTooLarge, a missing
// one ErrUnknownMachine.
func ReadDescriptionFile(p string) ([]byte, error) {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnknownMachine, &fs.PathError{Op: "open", Path: p, Err: err})
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnknownMachine, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", p, ErrNotRegular)
	}
	if fi.Size() > MaxDescriptionBytes {
		return nil, fmt.Errorf("%s: %w", p, ErrTooLarge)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxDescriptionBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read description: %w", err)
	}
	if len(data) > MaxDescriptionBytes { // grew while being read
		return nil, fmt.Errorf("%s: %w", p, ErrTooLarge)
	}
	return data, nil
}

// Machine is an emulated machine. Its methods and its tree are safe for
// concurrent use.
type Machine struct {
	desc        *Description
	now         func() time.Time
	load        LoadSource
	energyStart float64
	timeScale   float64       // divides tau (WithTimeScale)
	loopInfo    func() string // the closed loop's state (WithLoopInfo); nil: open
	variant     string        // the model variant (WithVariant, variant.go)

	platformNext int64 // platform-pl1: the next poll is at this many poll periods since boot

	msrs    map[msrKey]MSR    // the description's registers by address and core type
	cpuMSRs map[cpuMSRKey]MSR // entries restricted to CPU lists, by CPU
	cpuids  map[cpuidKey][4]uint32
	leaves  map[cpuidKey]bool // (cpu, leaf) pairs the description answers verbatim

	mu     sync.Mutex
	boot   time.Time
	last   time.Time
	loadAt time.Time // when busy was last read from the load source
	busy   []float64
	cpus   []*cpu
	pkgs   []*pkgState
	psysJ  float64
	intel  intelGlobal
	boost  bool     // amd-pstate: cpufreq/boost (policy->boost_enabled)
	tree   *vfs.Dir // built once by Tree
	writes writeLog // the register writes the model made, and who is writing
}

// cpu is one logical CPU: topology, model state and counters.
type cpu struct {
	n, pkg, core int // core: core id within the package
	coreIndex    int // index of the core within its group
	group        int
	apic         uint32
	ctName       string
	ct           *CoreType
	online       bool

	regs      map[uint32]uint64 // registers the model writes (HWP_REQUEST, EPB, PERF_CTL, CPPC_REQ)
	hwpStatus uint64            // IA32_HWP_STATUS bits the model set (sticky: nothing clears them)
	therm     uint64            // IA32_THERM_STATUS status and log bits the model set (thermal.go)

	// cpufreq policy state
	governor      string
	qosMin        uint64 // scaling_min_freq request, kHz
	qosMax        uint64 // scaling_max_freq request, kHz
	polMin        uint64 // effective policy->min
	polMax        uint64 // effective policy->max
	eppPolicy     string // intel: cpu_data->epp_policy ("" = unknown)
	eppPowersave  int    // intel: cpu_data->epp_powersave (-1: invalid)
	eppDefault    int
	minPerfRatio  int
	maxPerfRatio  int
	lastMHz       float64
	mperf, aperf  float64
	idle, busySec float64
	joules        float64 // this CPU's share of core energy
	op            opPoint // cached frequency and power for the current request
}

// pkgState holds a package's energy counters in joules and its power
// limit state (limits.go).
type pkgState struct {
	joules   map[string]float64
	limits   limitState
	platform platformState // the platform-pl1 variant's controller
}

// New builds a machine from a parsed description.
func New(d *Description, opts ...Option) (*Machine, error) {
	m := &Machine{desc: d, now: time.Now, msrs: map[msrKey]MSR{}, writes: writeLog{mono: monoNow},
		cpuMSRs: map[cpuMSRKey]MSR{}, cpuids: map[cpuidKey][4]uint32{}, leaves: map[cpuidKey]bool{}}
	for _, r := range d.MSRs {
		if r.CPUs == "" {
			m.msrs[msrKey{r.Addr, r.CoreType}] = r
			continue
		}
		l, _ := cpus.Parse(r.CPUs) // checked by ParseDescription
		for _, c := range l {
			m.cpuMSRs[cpuMSRKey{c, r.Addr}] = r
		}
	}
	m.indexCPUID()
	for _, o := range opts {
		o(m)
	}
	if m.timeScale <= 0 {
		m.timeScale = 1
	}
	m.boot = m.now()
	m.last = m.boot
	m.platformNext = 1
	n := 0
	for p := 0; p < d.Packages; p++ {
		coreID := 0
		for gi, g := range d.Cores {
			for c := 0; c < g.Count; c++ {
				for t := 0; t < g.Threads; t++ {
					c := &cpu{n: n, pkg: p, core: coreID, coreIndex: c, group: gi,
						ctName: g.Type, ct: d.CoreTypes[g.Type], online: true,
						regs: map[uint32]uint64{}, eppPowersave: -1}
					// x2APIC IDs: 2 bits per core for SMT, 7 bits of cores per
					// package (assumed layout; real parts leave gaps too).
					c.apic = uint32(p<<8 | coreID<<1 | t)
					m.cpus = append(m.cpus, c)
					n++
				}
				coreID++
			}
		}
		m.pkgs = append(m.pkgs, &pkgState{joules: map[string]float64{}, limits: m.initLimits(p)})
	}
	if err := m.checkVariant(); err != nil {
		return nil, err
	}
	for _, off := range d.Offline {
		if off <= 0 || off >= len(m.cpus) {
			return nil, fmt.Errorf("%w: %s: offline CPU %d (CPU 0 cannot be offline; %d CPUs)", ErrDescription, d.Name, off, len(m.cpus))
		}
		m.cpus[off].online = false
	}
	for _, p := range m.pkgs {
		for _, dom := range d.RAPL.Domains {
			p.joules[dom] = m.energyStart
		}
	}
	m.psysJ = m.energyStart
	for _, c := range m.cpus {
		for _, r := range d.MSRs {
			if r.Kind == "hwp_request" || r.Kind == "epb" || r.Kind == "perf_ctl" || r.Kind == "cppc_req" {
				if v, ok := m.constMSR(c, r.Addr); ok {
					c.regs[r.Addr] = v
				}
			}
		}
	}
	switch d.Driver.Name {
	case "intel_pstate":
		if err := m.intelInit(); err != nil {
			return nil, err
		}
	case "amd-pstate-epp":
		if err := m.amdInit(); err != nil {
			return nil, err
		}
	}
	for _, c := range m.cpus {
		c.lastMHz, _ = m.deliveredMHz(c, 1) // cpu MHz and scaling_cur_freq before time passes (as if busy)
	}
	if m.load == nil {
		// Opened now, before a caller mounts the emulated /proc/stat.
		hl, err := NewHostLoad("/proc/stat")
		if err != nil {
			return nil, err
		}
		m.load = hl
	}
	m.writes.on = true // from now on every register write is logged
	return m, nil
}

// Close closes the load source if it is an io.Closer (the default
// HostLoad is: it holds /proc/stat open).
func (m *Machine) Close() error {
	if c, ok := m.load.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Name returns the machine's name.
func (m *Machine) Name() string { return m.desc.Name }

// Description returns the machine's description. Callers must not modify
// it.
func (m *Machine) Description() *Description { return m.desc }

// NumCPUs returns the number of emulated CPUs (online or not).
func (m *Machine) NumCPUs() int { return len(m.cpus) }

// msrKey indexes the description's registers; coreType is "" for an
// entry that applies to every CPU.
type msrKey struct {
	addr     uint32
	coreType string
}

// cpuMSRKey indexes the entries restricted to CPU lists.
type cpuMSRKey struct {
	cpu  int
	addr uint32
}

// msrEntry finds the description's entry for addr on c: the one whose
// CPU list names c, else the one for c's core type, else the one for all
// CPUs.
func (m *Machine) msrEntry(c *cpu, addr uint32) (MSR, bool) {
	if r, ok := m.cpuMSRs[cpuMSRKey{c.n, addr}]; ok {
		return r, true
	}
	if r, ok := m.msrs[msrKey{addr, c.ctName}]; ok {
		return r, true
	}
	r, ok := m.msrs[msrKey{addr, ""}]
	return r, ok
}

func (m *Machine) constMSR(c *cpu, addr uint32) (uint64, bool) {
	r, ok := m.msrEntry(c, addr)
	return r.Value, ok
}

// ReadMSR returns what rdmsr of addr on CPU n gives now. Errors: ENXIO
// for an offline or absent CPU, EIO for a register the machine lacks
// (the msr driver's answer when rdmsr faults).
func (m *Machine) ReadMSR(n int, addr uint32) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n < 0 || n >= len(m.cpus) || !m.cpus[n].online {
		return 0, errNoCPU
	}
	m.advance()
	return m.readMSR(m.cpus[n], addr)
}

func (m *Machine) readMSR(c *cpu, addr uint32) (uint64, error) {
	r, ok := m.msrEntry(c, addr)
	if !ok {
		return 0, errNoReg
	}
	tscHz := float64(m.desc.TSCMHz) * 1e6
	switch r.Kind {
	case "":
		return r.Value, nil
	case "tsc":
		return r.Value + uint64(m.last.Sub(m.boot).Seconds()*tscHz), nil
	case "mperf":
		return r.Value + uint64(c.mperf), nil
	case "aperf":
		return r.Value + uint64(c.aperf), nil
	case "idle":
		return r.Value + uint64(c.idle), nil
	case "perf_status":
		// IA32_PERF_STATUS bits 15:8: the current ratio (of the bus clock).
		return uint64(math.Round(c.lastMHz/float64(m.desc.BusMHz))) << 8, nil
	case "hwp_request", "epb", "perf_ctl", "cppc_req":
		return c.regs[addr], nil
	case "pkg_power_limit":
		return m.pkgs[c.pkg].limits.reg, nil
	case "limit_reasons":
		return m.pkgs[c.pkg].limits.reasons, nil
	case "hwp_status":
		return r.Value | c.hwpStatus, nil
	case "therm_status":
		return m.thermStatus(r.Value, c.therm, m.coreTempC(c)), nil
	case "pkg_therm_status":
		return m.thermStatus(r.Value, m.pkgs[c.pkg].limits.therm, m.pkgTempC(c.pkg)), nil
	}
	dom := strings.TrimPrefix(r.Kind, "energy:")
	j := 0.0
	if dom == "thiscore" {
		for _, o := range m.cpus {
			if o.pkg == c.pkg && o.core == c.core {
				j += o.joules
			}
		}
		j += m.energyStart
	} else {
		j = m.energyJoules(c.pkg, dom)
	}
	return uint64(uint32(j / m.energyUnit())), nil
}

// energyJoules returns a domain's energy consumed so far.
func (m *Machine) energyJoules(pkg int, dom string) float64 {
	if dom == "psys" {
		return m.psysJ
	}
	return m.pkgs[pkg].joules[dom]
}

// energyUnit returns the RAPL energy unit in joules: 1/2^ESU with ESU in
// bits 12:8 of the unit register (SDM vol. 3B 15.10.1; the same layout in
// AMD's MSR C001_0299).
func (m *Machine) energyUnit() float64 {
	return rapl.DecodePowerUnit(m.msrs[msrKey{m.desc.RAPL.UnitMSR, ""}].Value).Energy
}

// onlineCPUs lists the online CPU numbers.
func (m *Machine) onlineCPUs() []int {
	var l []int
	for _, c := range m.cpus {
		if c.online {
			l = append(l, c.n)
		}
	}
	return l
}
