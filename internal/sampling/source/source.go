// SPDX-License-Identifier: Apache-2.0

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
//   - temperatures, limit reasons, HWP_REQUEST, EPB and HWP_STATUS: the
//     MSRs, every sample so that changes show (HWP_STATUS only where CPUID
//     enumerates HWP: hwpstatus.go).
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
	"strings"
	"time"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpuid"
	"github.com/hwpprobe/hwpprobe/internal/machine/regs"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
	"github.com/hwpprobe/hwpprobe/msr"
	"github.com/hwpprobe/hwpprobe/perfcount"
	"github.com/hwpprobe/hwpprobe/rapl"
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
	// CPUID tells whether the CPUs enumerate HWP (IA32_HWP_STATUS is
	// sampled only then); nil: the register probe alone decides.
	CPUID cpuid.Reader
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

	hwpReg   uint32 // the request register that reads (regs.Requests)
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
	s.probeSampled()
	s.probeHWPStatus(cfg.CPUID)
	s.probeLimitTable(cfg.CPUID)
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

// A note is one line: the lines of a joined error are separated by "; ".
func (s *Set) note(figure, format string, a ...any) {
	reason := strings.ReplaceAll(fmt.Sprintf(format, a...), "\n", "; ")
	s.setup.Notes = append(s.setup.Notes, sampler.Note{Figure: figure, Reason: reason})
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

// Read implements sampler.Reader: every CPU's counters (one perf group
// read per CPU when perf is used, APERF, MPERF and TSC MSRs), each CPU's
// timed (RawCPU.Time), then the CPUs' registers, then the package
// counters.
func (s *Set) Read(r *sampler.Raw) error {
	st := &s.setup
	for i := range s.cpus {
		cs, rc := &s.cpus[i], &r.CPU[i]
		rc.Bad = 0
		t0 := s.now()
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
			}
			if !ok1 || !ok2 || !ok3 {
				rc.Bad |= sampler.BadCounters
			}
		}
		t1 := s.now()
		rc.Time = t0.Add(t1.Sub(t0) / 2)
		if st.Counters == sampler.SrcMSR && st.TSC != sampler.SrcMSR {
			rc.TSC = 0
			if st.TSC == sampler.SrcClock {
				rc.TSC = uint64(rc.Time.Sub(s.start).Seconds() * s.tscHz)
			}
		}
	}
	// The registers after every CPU's counters, so that the counters are
	// read close together.
	for i := range s.cpus {
		cs, rc := &s.cpus[i], &r.CPU[i]
		var ok bool
		if st.HWPRequest != sampler.SrcNone {
			if rc.HWPRequest, ok = s.readMSR(cs.cpu, s.hwpReg); !ok {
				rc.Bad |= sampler.BadHWP
			}
		}
		if st.EPB != sampler.SrcNone {
			if rc.EPB, ok = s.readMSR(cs.cpu, regs.EPB().Address); !ok {
				rc.Bad |= sampler.BadEPB
			}
		}
		if st.CoreTmp != sampler.SrcNone {
			if rc.ThermStatus, ok = s.readMSR(cs.cpu, hwp.MSR_IA32_THERM_STATUS); !ok {
				rc.Bad |= sampler.BadTherm
			}
		}
		s.readHWPStatus(cs.cpu, rc)
		s.readRegs(cs.cpu, st.CPURegs, rc.Regs)
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
		if st.PowerLimit != sampler.SrcNone {
			if rp.PowerLimit, ok = s.readMSR(ps.cpu, rapl.MSR_PKG_POWER_LIMIT); !ok {
				rp.Bad |= sampler.BadPowerLimit
			}
		}
		s.readRegs(ps.cpu, st.PkgRegs, rp.Regs)
	}
	return nil
}

// readRegs reads the registers at addrs on cpu into out.
func (s *Set) readRegs(cpu int, addrs []uint32, out sampler.RawRegs) {
	for j, a := range addrs {
		out.V[j], out.OK[j] = s.readMSR(cpu, a)
	}
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
