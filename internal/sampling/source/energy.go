// SPDX-License-Identifier: Apache-2.0

package source

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
	"github.com/hwpprobe/hwpprobe/perfcount"
	"github.com/hwpprobe/hwpprobe/rapl"
)

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
			if t, err := sysfs.NewFS(cfg.Root).Topology(c); err == nil && t.PackageID == s.pkgs[i].pkg {
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

// powercapEnergy opens the energy_uj files of the RAPL zones
// (sysfs.EnergyZones), keeping them open for pread.
func (s *Set) powercapEnergy(cfg Config) error {
	fs := sysfs.NewFS(cfg.Root)
	zones, err := fs.EnergyZones()
	if err != nil {
		return fmt.Errorf("%s: %w", fs.Path("sys/class/powercap"), err)
	}
	found := false
	var maxUJ [sampler.NumDomains]uint64
	for _, z := range zones {
		dom, pkg := -1, -1
		switch {
		case strings.HasPrefix(z.Name, "package-"):
			dom = sampler.DomPkg
			pkg, _ = strconv.Atoi(strings.TrimPrefix(z.Name, "package-"))
		case z.Name == "psys":
			dom, pkg = sampler.DomPsys, s.pkgs[0].pkg
		default:
			d, ok := powercapDomains[z.Name]
			if !ok || !strings.HasPrefix(z.ParentName, "package-") {
				continue
			}
			// A sub-zone counts for its parent's package.
			dom = d
			pkg, _ = strconv.Atoi(strings.TrimPrefix(z.ParentName, "package-"))
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
		// A raw descriptor: one pread(2) per reading (os.File.ReadAt
		// would make a second call to see EOF).
		fd, err := unix.Open(z.EnergyUJ, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // unreadable without root since 2020 (CVE-2020-8694)
		}
		s.closers = append(s.closers, func() error { return unix.Close(fd) })
		s.pkgs[pi].powercap[dom] = fd
		maxUJ[dom] = z.MaxUJ
		found = true
	}
	if !found {
		return fmt.Errorf("no readable intel-rapl zone in %s", fs.Path("sys/class/powercap"))
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
