// Package source decides where each of the sampler's figures comes from
// on this machine, with fallbacks, and reads them (it implements
// sampler.Reader):
//
//   - APERF/MPERF/TSC: one perf group per CPU from the msr PMU when it
//     has aperf, mperf and tsc; else the MSRs (IA32_APERF 0xE8,
//     IA32_MPERF 0xE7, IA32_TIME_STAMP_COUNTER 0x10, or the TSC from the
//     clock and MSR_PLATFORM_INFO's base ratio); else the msr PMU's tsc
//     alone (TSC_MHz only). The three always come from one source so that
//     their ratios are consistent.
//   - instructions, cycles, ref-cycles: perf hardware events, in the same
//     per-CPU group.
//   - energy: the perf power PMU (energy-pkg/-cores/-gpu/-ram/-psys with
//     their .scale), else powercap (intel-rapl:*/energy_uj, wrapping at
//     max_energy_range_uj), else the RAPL MSRs (32-bit, wrap-aware, units
//     from MSR_RAPL_POWER_UNIT).
//   - temperatures, limit reasons, HWP_REQUEST and EPB: the MSRs, every
//     sample so that changes show.
//
// Under an emulated machine (sysfs.FS.Emulated) perf is not used: perf
// counts the real machine, not the emulated one.
//
// What is missing is said in Setup().Notes, one line per figure, instead
// of showing zeros.
package source

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/msr"
	"github.com/hwpprobe/hwpprobe/perfcount"
	"github.com/hwpprobe/hwpprobe/rapl"
	"github.com/hwpprobe/hwpprobe/sampler"
	"golang.org/x/sys/unix"
)

// Registers read besides those named in package hwp and rapl.
const (
	msrTSC = 0x10 // IA32_TIME_STAMP_COUNTER
)

// Config selects what to sample.
type Config struct {
	// Root is the system root ("/" normally).
	Root string
	// CPUs are the CPUs to sample, with their package and core type
	// (Topology gives them).
	CPUs []sampler.Topo
	// MSR reads registers; nil opens msr.Open(Root).
	MSR msr.Reader
	// Perf enables perf_event sources. Leave it off under emulation.
	Perf bool
	// Emulated is the emulated machine's name ("" on real hardware).
	Emulated string
	// Now is the monotonic clock for a TSC derived from the clock (nil:
	// time.Now).
	Now func() time.Time
}

// Set is the opened sources for a list of CPUs. It implements
// sampler.Reader. It is not safe for concurrent use.
type Set struct {
	setup sampler.Setup
	msr   msr.Reader
	own   *msr.Dev // opened by Open, closed by Close
	now   func() time.Time
	start time.Time

	cpus []cpuSrc
	pkgs []pkgSrc

	hwpReg   uint32 // IA32_HWP_REQUEST or MSR_AMD_CPPC_REQ
	tscHz    float64
	syscalls uint64
	closers  []func() error
}

// cpuSrc is one CPU's perf group and the positions of its events.
type cpuSrc struct {
	cpu   int
	group *perfcount.Group
	rd    perfcount.Reading
	// idx: positions in the group of aperf, mperf, tsc, instructions,
	// cycles, ref-cycles (-1: absent).
	aperf, mperf, tsc, instr, cycles, ref int
}

// pkgSrc is one package's energy counters.
type pkgSrc struct {
	pkg      int
	cpu      int                     // CPU whose MSRs give the package registers
	powercap [sampler.NumDomains]int // energy_uj descriptors (-1: none)
	power    *powerGroup
	msrs     [sampler.NumDomains]uint32
}

// powerGroup is the power PMU group of one package.
type powerGroup struct {
	g   *perfcount.Group
	rd  perfcount.Reading
	idx [sampler.NumDomains]int
}

// Open probes the sources for cfg's CPUs. It fails only for bad input
// (no CPUs); a machine that provides nothing gives a Set whose figures are
// all absent, with Notes saying why.
func Open(cfg Config) (*Set, error) {
	if len(cfg.CPUs) == 0 {
		return nil, errors.New("source: no CPUs selected")
	}
	if cfg.Root == "" {
		cfg.Root = "/"
	}
	s := &Set{msr: cfg.MSR, now: cfg.Now}
	if s.now == nil {
		s.now = time.Now
	}
	if s.msr == nil {
		s.own = msr.Open(cfg.Root)
		s.msr = s.own
	}
	st := &s.setup
	st.Emulated = cfg.Emulated
	st.CPUs = append([]sampler.Topo(nil), cfg.CPUs...)
	for _, c := range cfg.CPUs {
		if !containsInt(st.Packages, c.Package) {
			st.Packages = append(st.Packages, c.Package)
		}
	}
	s.cpus = make([]cpuSrc, len(cfg.CPUs))
	s.pkgs = make([]pkgSrc, len(st.Packages))
	for i, p := range st.Packages {
		s.pkgs[i].pkg = p
		for d := range s.pkgs[i].powercap {
			s.pkgs[i].powercap[d] = -1
		}
		for _, c := range cfg.CPUs {
			if c.Package == p {
				s.pkgs[i].cpu = c.CPU
				break
			}
		}
	}
	s.probeRegisters()
	s.probeCounters(cfg)
	s.probeEnergy(cfg)
	s.start = s.now()
	return s, nil
}

func containsInt(l []int, v int) bool {
	for _, x := range l {
		if x == v {
			return true
		}
	}
	return false
}

func (s *Set) note(figure, format string, a ...any) {
	s.setup.Notes = append(s.setup.Notes, sampler.Note{Figure: figure, Reason: fmt.Sprintf(format, a...)})
}

// probeMSR reads reg on cpu once to learn whether it is there.
func (s *Set) probeMSR(cpu int, reg uint32) (uint64, error) {
	s.syscalls++
	return s.msr.ReadMSR(cpu, reg)
}

// msrReason words an MSR probe failure for a note.
func msrReason(reg string, err error) string {
	if errors.Is(err, msr.ErrUnsupported) {
		return reg + " is not implemented on this CPU"
	}
	return err.Error()
}

// probeRegisters finds the per-CPU and per-package registers: HWP
// request, EPB, thermal status (with TjMax), limit reasons.
func (s *Set) probeRegisters() {
	st := &s.setup
	c0 := st.CPUs[0].CPU
	if _, err := s.probeMSR(c0, hwp.MSR_IA32_HWP_REQUEST); err == nil {
		s.hwpReg, st.HWPRequest = hwp.MSR_IA32_HWP_REQUEST, sampler.SrcMSR
	} else if _, err2 := s.probeMSR(c0, hwp.MSR_AMD_CPPC_REQ); err2 == nil {
		s.hwpReg, st.HWPRequest = hwp.MSR_AMD_CPPC_REQ, sampler.SrcMSR
	} else {
		s.note("HWP_REQUEST", "%s", msrReason("IA32_HWP_REQUEST (0x774) and MSR_AMD_CPPC_REQ", err))
	}
	st.HWPRegister = s.hwpReg
	if _, err := s.probeMSR(c0, hwp.MSR_IA32_ENERGY_PERF_BIAS); err == nil {
		st.EPB = sampler.SrcMSR
	} else {
		s.note("EPB", "%s", msrReason("IA32_ENERGY_PERF_BIAS (0x1B0)", err))
	}
	// TjMax: MSR_TEMPERATURE_TARGET bits 23:16 (turbostat
	// set_temperature_target); without it turbostat assumes 100 °C.
	tj := func(cpu int) (float64, bool) {
		v, err := s.probeMSR(cpu, hwp.MSR_TEMPERATURE_TARGET)
		tt := hwp.DecodeTemperatureTarget(v)
		if err != nil || tt.TjMax == 0 {
			return 100, false
		}
		return float64(tt.TjMax), true
	}
	if _, err := s.probeMSR(c0, hwp.MSR_IA32_THERM_STATUS); err == nil {
		st.CoreTmp = sampler.SrcMSR
		st.TjMax = make([]float64, len(st.CPUs))
		assumed := false
		for i, c := range st.CPUs {
			var ok bool
			st.TjMax[i], ok = tj(c.CPU)
			assumed = assumed || !ok
		}
		if assumed {
			s.note("CoreTmp", "MSR_TEMPERATURE_TARGET (0x1A2) unreadable: TjMax assumed 100 °C as turbostat does")
		}
	} else {
		s.note("CoreTmp", "%s", msrReason("IA32_THERM_STATUS (0x19C)", err))
	}
	p0 := s.pkgs[0].cpu
	if _, err := s.probeMSR(p0, hwp.MSR_IA32_PACKAGE_THERM_STATUS); err == nil {
		st.PkgTmp = sampler.SrcMSR
		st.PkgTjMax = make([]float64, len(s.pkgs))
		for i, p := range s.pkgs {
			st.PkgTjMax[i], _ = tj(p.cpu)
		}
	} else {
		s.note("PkgTmp", "%s", msrReason("IA32_PACKAGE_THERM_STATUS (0x1B1)", err))
	}
	if _, err := s.probeMSR(p0, hwp.MSR_CORE_PERF_LIMIT_REASONS); err == nil {
		st.LimitReasons = sampler.SrcMSR
	} else {
		s.note("LIMIT_REASONS", "%s", msrReason("MSR_CORE_PERF_LIMIT_REASONS (0x64F)", err))
	}
}

// probeCounters picks the APERF/MPERF/TSC source and opens the per-CPU
// perf groups.
func (s *Set) probeCounters(cfg Config) {
	st := &s.setup
	var evs []perfcount.Event
	perfHas := map[string]bool{}
	if cfg.Perf {
		if pmu, err := perfcount.ProbePMU(cfg.Root, "msr"); err == nil {
			for _, n := range []string{"aperf", "mperf", "tsc"} {
				if e, err := pmu.Event(n); err == nil {
					evs = append(evs, e)
					perfHas[n] = true
				}
			}
		} else {
			s.note("Avg_MHz", "perf: %v", err)
		}
		for _, n := range []string{"instructions", "cycles", "ref-cycles"} {
			e, _ := perfcount.Hardware(n)
			evs = append(evs, e)
		}
	}
	perfCounters := perfHas["aperf"] && perfHas["mperf"] && perfHas["tsc"]
	if !perfCounters {
		// Keep the perf TSC only if the MSRs cannot give all three.
		if s.msrCounters() {
			evs = dropEvents(evs, "aperf", "mperf", "tsc")
		} else {
			evs = dropEvents(evs, "aperf", "mperf")
		}
	}
	opened := map[string]int{}
	var skipped []perfcount.Skipped
	if len(evs) > 0 {
		for i, c := range st.CPUs {
			cs := &s.cpus[i]
			cs.cpu = c.CPU
			cs.aperf, cs.mperf, cs.tsc, cs.instr, cs.cycles, cs.ref = -1, -1, -1, -1, -1, -1
			g, err := perfcount.OpenGroup(-1, c.CPU, evs)
			if err != nil {
				if i == 0 {
					s.note("perf", "no perf events open on cpu%d: %v", c.CPU, err)
				}
				continue
			}
			cs.group, cs.rd = g, g.NewReading()
			cs.aperf, cs.mperf, cs.tsc = g.Index("aperf"), g.Index("mperf"), g.Index("tsc")
			cs.instr, cs.cycles, cs.ref = g.Index("instructions"), g.Index("cycles"), g.Index("ref-cycles")
			for _, e := range g.Events() {
				opened[e.Name]++
			}
			if i == 0 {
				skipped = g.Skipped()
			}
			s.closers = append(s.closers, g.Close)
		}
	} else {
		for i, c := range st.CPUs {
			s.cpus[i] = cpuSrc{cpu: c.CPU, aperf: -1, mperf: -1, tsc: -1, instr: -1, cycles: -1, ref: -1}
		}
	}
	all := func(n string) bool { return opened[n] == len(st.CPUs) }
	switch {
	case perfCounters && all("aperf") && all("mperf") && all("tsc"):
		st.Counters, st.TSC = sampler.SrcPerf, sampler.SrcPerf
	case st.Counters == sampler.SrcMSR:
		// set by msrCounters
	case all("tsc"):
		st.TSC = sampler.SrcPerf
		s.note("Avg_MHz", "no APERF/MPERF: %s; Avg_MHz, Busy%% and Bzy_MHz are not available", s.noCountersWhy(cfg, perfHas))
	default:
		s.note("Avg_MHz", "no APERF/MPERF/TSC: %s", s.noCountersWhy(cfg, perfHas))
	}
	if all("instructions") {
		st.Instructions = sampler.SrcPerf
	}
	if all("cycles") {
		st.Cycles = sampler.SrcPerf
	}
	if all("ref-cycles") {
		st.RefCycles = sampler.SrcPerf
	}
	for _, sk := range skipped {
		if sk.Event.Name == "instructions" {
			s.note("IPC", "perf %v", sk.Err)
		}
	}
	if !cfg.Perf {
		s.note("IPC", "perf events not used (emulated machine: perf counts the real one)")
	}
}

// noCountersWhy explains the absence of APERF/MPERF.
func (s *Set) noCountersWhy(cfg Config, perfHas map[string]bool) string {
	var parts []string
	if cfg.Perf {
		var miss []string
		for _, n := range []string{"aperf", "mperf"} {
			if !perfHas[n] {
				miss = append(miss, n)
			}
		}
		if len(miss) > 0 {
			parts = append(parts, "the perf msr PMU has no "+strings.Join(miss, "/")+" event")
		}
	}
	_, err := s.msr.ReadMSR(s.setup.CPUs[0].CPU, hwp.MSR_IA32_APERF)
	if err != nil {
		parts = append(parts, msrReason("IA32_APERF (0xE8)", err))
	}
	return strings.Join(parts, "; ")
}

// msrCounters probes APERF, MPERF and the TSC in the MSRs; on success it
// sets the Setup's Counters and TSC sources.
func (s *Set) msrCounters() bool {
	st := &s.setup
	c0 := st.CPUs[0].CPU
	if _, err := s.probeMSR(c0, hwp.MSR_IA32_APERF); err != nil {
		return false
	}
	if _, err := s.probeMSR(c0, hwp.MSR_IA32_MPERF); err != nil {
		return false
	}
	st.Counters = sampler.SrcMSR
	if _, err := s.probeMSR(c0, msrTSC); err == nil {
		st.TSC = sampler.SrcMSR
		return true
	}
	// The TSC runs at the base frequency on parts with an invariant TSC:
	// MSR_PLATFORM_INFO bits 15:8 (Maximum Non-Turbo Ratio) x 100 MHz.
	if v, err := s.probeMSR(c0, hwp.MSR_PLATFORM_INFO); err == nil && hwp.DecodePlatformInfo(v).MaxNonTurboRatio != 0 {
		s.tscHz = float64(hwp.DecodePlatformInfo(v).MaxNonTurboRatio) * 100e6
		st.TSC = sampler.SrcClock
		s.note("TSC_MHz", "IA32_TIME_STAMP_COUNTER unreadable: TSC taken as the clock x %.0f MHz (MSR_PLATFORM_INFO base ratio)", s.tscHz/1e6)
		return true
	}
	st.Counters = sampler.SrcNone
	return false
}

func dropEvents(evs []perfcount.Event, names ...string) []perfcount.Event {
	out := evs[:0:0]
	for _, e := range evs {
		keep := true
		for _, n := range names {
			if e.PMU == "msr" && e.Name == n {
				keep = false
			}
		}
		if keep {
			out = append(out, e)
		}
	}
	return out
}

// perfDomains maps the power PMU's events to domains.
var perfDomains = [sampler.NumDomains]string{"energy-pkg", "energy-cores", "energy-gpu", "energy-ram", "energy-psys"}

// powercapDomains maps powercap zone names to domains ("uncore" is PP1,
// the graphics).
var powercapDomains = map[string]int{"core": sampler.DomCores, "uncore": sampler.DomGFX, "dram": sampler.DomRAM, "psys": sampler.DomPsys}

// msrDomains are the Intel RAPL energy status registers by domain.
var msrDomains = [sampler.NumDomains]uint32{rapl.MSR_PKG_ENERGY_STATUS, rapl.MSR_PP0_ENERGY_STATUS, rapl.MSR_PP1_ENERGY_STATUS, rapl.MSR_DRAM_ENERGY_STATUS, rapl.MSR_PLATFORM_ENERGY_STATUS}

// probeEnergy picks the energy source: perf power PMU, powercap, MSRs.
func (s *Set) probeEnergy(cfg Config) {
	var why []string
	if cfg.Perf {
		err := s.perfEnergy(cfg)
		if err == nil {
			return
		}
		why = append(why, "perf: "+err.Error())
	}
	err := s.powercapEnergy(cfg)
	if err == nil {
		return
	}
	why = append(why, "powercap: "+err.Error())
	err = s.msrEnergy()
	if err == nil {
		return
	}
	why = append(why, "msr: "+err.Error())
	s.note("PkgWatt", "no energy counters: %s", strings.Join(why, "; "))
}

// perfEnergy opens the power PMU's events on the CPU its cpumask lists
// for each package.
func (s *Set) perfEnergy(cfg Config) error {
	pmu, err := perfcount.ProbePMU(cfg.Root, "power")
	if err != nil {
		return err
	}
	var evs []perfcount.Event
	for _, n := range perfDomains {
		if e, err := pmu.Event(n); err == nil {
			evs = append(evs, e)
		}
	}
	if len(evs) == 0 {
		return fmt.Errorf("the power PMU has no energy events")
	}
	var groups []*perfcount.Group
	fail := func(err error) error {
		for _, g := range groups {
			g.Close()
		}
		for i := range s.pkgs {
			s.pkgs[i].power = nil
		}
		return err
	}
	for i := range s.pkgs {
		cpu := -1
		for _, c := range pmu.CPUs {
			if pkg, err := packageOf(cfg.Root, c); err == nil && pkg == s.pkgs[i].pkg {
				cpu = c
			}
		}
		if cpu < 0 {
			return fail(fmt.Errorf("power PMU cpumask %v has no CPU in package %d", pmu.CPUs, s.pkgs[i].pkg))
		}
		g, err := perfcount.OpenGroup(-1, cpu, evs)
		if err != nil {
			return fail(err)
		}
		groups = append(groups, g)
		pg := &powerGroup{g: g, rd: g.NewReading()}
		for d, n := range perfDomains {
			pg.idx[d] = g.Index(n)
		}
		s.pkgs[i].power = pg
	}
	for _, g := range groups {
		s.closers = append(s.closers, g.Close)
	}
	for d := range perfDomains {
		if idx := s.pkgs[0].power.idx[d]; idx >= 0 {
			e := s.pkgs[0].power.g.Events()[idx]
			s.setup.Energy[d] = sampler.EnergyCounter{Src: sampler.SrcPerf, Unit: e.Scale}
		}
	}
	return nil
}

// packageOf reads a CPU's physical_package_id.
func packageOf(root string, cpu int) (int, error) {
	b, err := os.ReadFile(filepath.Join(root, "sys/devices/system/cpu", "cpu"+strconv.Itoa(cpu), "topology/physical_package_id"))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// powercapEnergy opens intel-rapl:* energy_uj files, keeping them open
// for pread.
func (s *Set) powercapEnergy(cfg Config) error {
	dir := filepath.Join(cfg.Root, "sys/class/powercap")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	found := false
	var maxUJ [sampler.NumDomains]uint64
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, "intel-rapl:") && !strings.HasPrefix(name, "amd-rapl:") {
			continue
		}
		zone := filepath.Join(dir, name)
		zn, err := readTrim(filepath.Join(zone, "name"))
		if err != nil {
			continue
		}
		dom, pkg := -1, -1
		switch {
		case strings.HasPrefix(zn, "package-"):
			dom = sampler.DomPkg
			pkg, _ = strconv.Atoi(strings.TrimPrefix(zn, "package-"))
		case zn == "psys":
			dom, pkg = sampler.DomPsys, s.pkgs[0].pkg
		default:
			d, ok := powercapDomains[zn]
			if !ok {
				continue
			}
			dom = d
			// Sub-zone intel-rapl:P:K: its parent's package.
			parts := strings.Split(name, ":")
			if len(parts) != 3 {
				continue
			}
			pz, err := readTrim(filepath.Join(dir, parts[0]+":"+parts[1], "name"))
			if err != nil || !strings.HasPrefix(pz, "package-") {
				continue
			}
			pkg, _ = strconv.Atoi(strings.TrimPrefix(pz, "package-"))
		}
		pi := -1
		for i, p := range s.pkgs {
			if p.pkg == pkg {
				pi = i
			}
		}
		if pi < 0 || s.pkgs[pi].powercap[dom] >= 0 {
			continue
		}
		m, err := readTrim(filepath.Join(zone, "max_energy_range_uj"))
		if err != nil {
			continue
		}
		mx, err := strconv.ParseUint(m, 10, 64)
		if err != nil {
			continue
		}
		// A raw descriptor: one pread(2) per reading (os.File.ReadAt
		// would make a second call to see EOF).
		fd, err := unix.Open(filepath.Join(zone, "energy_uj"), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // unreadable without root since 2020 (CVE-2020-8694)
		}
		s.closers = append(s.closers, func() error { return unix.Close(fd) })
		s.pkgs[pi].powercap[dom] = fd
		maxUJ[dom] = mx
		found = true
	}
	if !found {
		return fmt.Errorf("no readable intel-rapl zone in %s", dir)
	}
	for d := range sampler.NumDomains {
		complete := true
		for _, p := range s.pkgs {
			if p.powercap[d] < 0 {
				complete = d == sampler.DomPsys && p.pkg != s.pkgs[0].pkg
				if !complete {
					break
				}
			}
		}
		if complete && s.pkgs[0].powercap[d] >= 0 {
			// energy_uj wraps to 0 after max_energy_range_uj.
			s.setup.Energy[d] = sampler.EnergyCounter{Src: sampler.SrcPowercap, Unit: 1e-6, Modulus: maxUJ[d]}
		}
	}
	if s.setup.Energy[sampler.DomPkg].Src == sampler.SrcNone {
		return fmt.Errorf("no package zone for every package")
	}
	return nil
}

// msrEnergy reads the RAPL energy status MSRs (Intel; AMD's package
// counter), units from the power unit register.
func (s *Set) msrEnergy() error {
	c0 := s.pkgs[0].cpu
	unitReg, regs := uint32(rapl.MSR_RAPL_POWER_UNIT), msrDomains
	uv, err := s.probeMSR(c0, unitReg)
	if err != nil {
		if v, aerr := s.probeMSR(c0, rapl.MSR_AMD_RAPL_POWER_UNIT); aerr == nil {
			uv, unitReg, err = v, rapl.MSR_AMD_RAPL_POWER_UNIT, nil
			regs = [sampler.NumDomains]uint32{sampler.DomPkg: rapl.MSR_AMD_PKG_ENERGY_STATUS}
		}
	}
	if err != nil {
		return errors.New(msrReason("MSR_RAPL_POWER_UNIT (0x606)", err))
	}
	u := rapl.DecodePowerUnit(uv)
	for d, reg := range regs {
		if reg == 0 {
			continue
		}
		if _, err := s.probeMSR(c0, reg); err != nil {
			continue
		}
		for i := range s.pkgs {
			s.pkgs[i].msrs[d] = reg
		}
		// The energy status counters are 32 bits wide (SDM 15.10.3).
		s.setup.Energy[d] = sampler.EnergyCounter{Src: sampler.SrcMSR, Unit: u.Energy, Modulus: 1 << 32}
	}
	if s.setup.Energy[sampler.DomPkg].Src == sampler.SrcNone {
		return errors.New("no package energy status register")
	}
	return nil
}

func readTrim(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// Setup implements sampler.Reader.
func (s *Set) Setup() *sampler.Setup { return &s.setup }

// Syscalls returns the number of read system calls (read, pread) made
// so far, probes included.
func (s *Set) Syscalls() uint64 { return s.syscalls }

// readMSR reads one register, counting the system call.
func (s *Set) readMSR(cpu int, reg uint32) (uint64, bool) {
	s.syscalls++
	v, err := s.msr.ReadMSR(cpu, reg)
	return v, err == nil
}

// Read implements sampler.Reader: one perf group read per CPU (when
// perf is used), then the MSRs, then the package counters.
func (s *Set) Read(r *sampler.Raw) error {
	st := &s.setup
	var clockTSC uint64
	if st.TSC == sampler.SrcClock {
		clockTSC = uint64(s.now().Sub(s.start).Seconds() * s.tscHz)
	}
	for i := range s.cpus {
		cs, rc := &s.cpus[i], &r.CPU[i]
		rc.Bad = 0
		if cs.group != nil {
			s.syscalls++
			if err := cs.group.Read(&cs.rd); err != nil {
				rc.Bad |= sampler.BadPerf
			} else {
				v := cs.rd.Values
				rc.Enabled, rc.Running = cs.rd.Enabled, cs.rd.Running
				if cs.aperf >= 0 && st.Counters == sampler.SrcPerf {
					rc.APERF, rc.MPERF = v[cs.aperf], v[cs.mperf]
				}
				if cs.tsc >= 0 && st.TSC == sampler.SrcPerf {
					rc.TSC = v[cs.tsc]
				}
				if cs.instr >= 0 {
					rc.Instructions = v[cs.instr]
				}
				if cs.cycles >= 0 {
					rc.Cycles = v[cs.cycles]
				}
				if cs.ref >= 0 {
					rc.RefCycles = v[cs.ref]
				}
			}
		} else if st.Counters == sampler.SrcPerf || st.TSC == sampler.SrcPerf || st.Instructions == sampler.SrcPerf {
			rc.Bad |= sampler.BadPerf
		}
		if st.Counters == sampler.SrcMSR {
			var ok1, ok2, ok3 bool
			rc.APERF, ok1 = s.readMSR(cs.cpu, hwp.MSR_IA32_APERF)
			rc.MPERF, ok2 = s.readMSR(cs.cpu, hwp.MSR_IA32_MPERF)
			ok3 = true
			if st.TSC == sampler.SrcMSR {
				rc.TSC, ok3 = s.readMSR(cs.cpu, msrTSC)
			} else {
				rc.TSC = clockTSC
			}
			if !ok1 || !ok2 || !ok3 {
				rc.Bad |= sampler.BadCounters
			}
		}
		var ok bool
		if st.HWPRequest != sampler.SrcNone {
			if rc.HWPRequest, ok = s.readMSR(cs.cpu, s.hwpReg); !ok {
				rc.Bad |= sampler.BadHWP
			}
		}
		if st.EPB != sampler.SrcNone {
			if rc.EPB, ok = s.readMSR(cs.cpu, hwp.MSR_IA32_ENERGY_PERF_BIAS); !ok {
				rc.Bad |= sampler.BadEPB
			}
		}
		if st.CoreTmp != sampler.SrcNone {
			if rc.ThermStatus, ok = s.readMSR(cs.cpu, hwp.MSR_IA32_THERM_STATUS); !ok {
				rc.Bad |= sampler.BadTherm
			}
		}
	}
	for i := range s.pkgs {
		ps, rp := &s.pkgs[i], &r.Pkg[i]
		rp.Bad = 0
		if !s.readEnergy(ps, rp) {
			rp.Bad |= sampler.BadEnergy
		}
		var ok bool
		if st.PkgTmp != sampler.SrcNone {
			if rp.ThermStatus, ok = s.readMSR(ps.cpu, hwp.MSR_IA32_PACKAGE_THERM_STATUS); !ok {
				rp.Bad |= sampler.BadTherm
			}
		}
		if st.LimitReasons != sampler.SrcNone {
			if rp.LimitReasons, ok = s.readMSR(ps.cpu, hwp.MSR_CORE_PERF_LIMIT_REASONS); !ok {
				rp.Bad |= sampler.BadLimit
			}
		}
	}
	return nil
}

// readEnergy fills a package's energy counters from its source.
func (s *Set) readEnergy(ps *pkgSrc, rp *sampler.RawPkg) bool {
	st := &s.setup
	switch {
	case ps.power != nil:
		s.syscalls++
		if err := ps.power.g.Read(&ps.power.rd); err != nil {
			return false
		}
		for d, idx := range ps.power.idx {
			if idx >= 0 {
				rp.Energy[d] = ps.power.rd.Values[idx]
			}
		}
	case st.Energy[sampler.DomPkg].Src == sampler.SrcPowercap:
		var buf [24]byte
		for d, fd := range ps.powercap {
			if fd < 0 {
				continue
			}
			s.syscalls++
			n, err := unix.Pread(fd, buf[:], 0)
			if err != nil || n <= 0 {
				return false
			}
			v, ok := parseUint(buf[:n])
			if !ok {
				return false
			}
			rp.Energy[d] = v
		}
	case st.Energy[sampler.DomPkg].Src == sampler.SrcMSR:
		for d, reg := range ps.msrs {
			if reg == 0 {
				continue
			}
			v, ok := s.readMSR(ps.cpu, reg)
			if !ok {
				return false
			}
			rp.Energy[d] = uint64(rapl.EnergyCount(v))
		}
	}
	return true
}

// parseUint parses a decimal number followed by optional whitespace,
// without allocating.
func parseUint(b []byte) (uint64, bool) {
	var v uint64
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		v = v*10 + uint64(c-'0')
		n++
	}
	return v, n > 0
}

func (s *Set) closeAll() error {
	var errs []error
	for i := len(s.closers) - 1; i >= 0; i-- {
		errs = append(errs, s.closers[i]())
	}
	s.closers = nil
	return errors.Join(errs...)
}

// Close releases perf events, powercap files and the MSR devices Open
// opened.
func (s *Set) Close() error {
	err := s.closeAll()
	if s.own != nil {
		err = errors.Join(err, s.own.Close())
	}
	return err
}
