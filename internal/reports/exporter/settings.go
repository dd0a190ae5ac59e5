// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
	"github.com/hwpprobe/hwpprobe/internal/kernel/topology"
	"github.com/hwpprobe/hwpprobe/internal/machine/regs"
	"github.com/hwpprobe/hwpprobe/internal/machine/snapshot"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
	"github.com/hwpprobe/hwpprobe/msr"
)

// cpuSettings says which settings of one CPU the first snapshot found
// readable; a refresh reads only those (what was absent stays absent).
type cpuSettings struct {
	cpu    int
	labels []string // cpu, core_type, package
	// sample is the CPU's index in the sampler's Sample.CPUs, -1 when
	// the sampler does not read it.
	sample int
	// cpufreq: the CPU has a cpufreq policy with a scaling_driver.
	cpufreq bool
	// req is the request register the snapshot read (Intel's, else
	// AMD's; nil for none).
	req *regs.Register
	// Registers: Intel HWP capabilities or AMD CPPC CAP1, EPB from the
	// register or else from sysfs.
	hwpCap, cppcCap, epbMSR, epbFile bool
}

// settingsReader reads, at each refresh, what every CPU is asked for:
// cpufreq's settings and limits and the request, capability and EPB
// registers. It reads only those files and registers, not a whole
// snapshot: topology, caches, CPUID and package registers do not change
// between refreshes and are not exported. The request and EPB registers
// come from the refresh's sample where the sampler read them (it reads
// both on every CPU), so that they are not read twice.
type settingsReader struct {
	fs   sysfs.FS
	msr  msr.Reader
	cpus []cpuSettings
	// hwpRegister is the request register in the sample's HWPRequest
	// (sampler.Setup.HWPRegister).
	hwpRegister uint32
}

// newSettingsReader takes from the first snapshot which settings each CPU
// has, and from the sampler's setup where each CPU is in its samples.
func newSettingsReader(fs sysfs.FS, m msr.Reader, s *snapshot.Snapshot, st *sampler.Setup) *settingsReader {
	r := &settingsReader{fs: fs, msr: m, hwpRegister: st.HWPRegister}
	index := map[int]int{}
	for i, t := range st.CPUs {
		index[t.CPU] = i
	}
	for _, g := range s.Groups {
		for i := range g.CPUs {
			c := &g.CPUs[i]
			reg := &c.Registers
			idx, ok := index[c.CPU]
			if !ok {
				idx = -1
			}
			var req *regs.Register
			if q, ok := reg.Request(); ok {
				req = q.Register
			}
			r.cpus = append(r.cpus, cpuSettings{
				cpu:     c.CPU,
				sample:  idx,
				labels:  cpuLabelValues(c.CPU, c.Package, coreType(st, idx)),
				cpufreq: c.Sysfs.ScalingDriver != nil,
				req:     req,
				hwpCap:  reg.HWPCapabilities != nil,
				cppcCap: reg.HWPCapabilities == nil && reg.CPPCCap1 != nil,
				epbMSR:  reg.EPB != nil,
				epbFile: reg.EPB == nil && c.Sysfs.EPB != nil,
			})
		}
	}
	return r
}

// coreType is the core type of the setup's CPU i ("" for -1).
func coreType(st *sampler.Setup, i int) topology.CoreType {
	if i < 0 {
		return ""
	}
	return st.CPUs[i].Type
}

// read adds every CPU's settings to b, taking the request and EPB
// registers from smp where it has them (smp may be nil: a failed
// sample); it reports false when a file or register that was readable at
// start could not be read (that figure is then absent from this
// refresh).
func (r *settingsReader) read(b *builder, smp *sampler.Sample) bool {
	ok := true
	for i := range r.cpus {
		c := &r.cpus[i]
		if c.cpufreq && !r.cpufreq(b, c) {
			ok = false
		}
		var sc *sampler.CPU
		if smp != nil && c.sample >= 0 && c.sample < len(smp.CPUs) {
			sc = &smp.CPUs[c.sample]
		}
		if !r.registers(b, c, sc) {
			ok = false
		}
	}
	return ok
}

// cpufreq adds the cpufreq_info series and the four limits.
func (r *settingsReader) cpufreq(b *builder, c *cpuSettings) bool {
	dir := "sys/devices/system/cpu/cpu" + strconv.Itoa(c.cpu) + "/cpufreq"
	ok := true
	str := func(name string) (string, bool) {
		s, err := readAttr(r.fs.Path(dir, name))
		if err != nil && !sysfs.IsNotExist(err) {
			ok = false
		}
		return s, err == nil
	}
	if driver, has := str("scaling_driver"); has {
		governor, _ := str("scaling_governor")
		epp, _ := str("energy_performance_preference")
		b.add(descCPUFreqInfo, prometheus.GaugeValue, 1, append(c.labels[:3:3], driver, governor, epp)...)
	}
	for _, f := range [...]struct {
		d    *prometheus.Desc
		name string
	}{
		{descScalingMin, "scaling_min_freq"},
		{descScalingMax, "scaling_max_freq"},
		{descInfoMin, "cpuinfo_min_freq"},
		{descInfoMax, "cpuinfo_max_freq"},
	} {
		s, has := str(f.name)
		if !has {
			continue
		}
		khz, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			ok = false
			continue
		}
		b.add(f.d, prometheus.GaugeValue, float64(khz)*1e3, c.labels...)
	}
	return ok
}

// registers adds the request, capability and EPB fields; sc, when not
// nil, is the CPU's sample, whose request and EPB registers are used
// where it read them.
func (r *settingsReader) registers(b *builder, c *cpuSettings, sc *sampler.CPU) bool {
	ok := true
	read := func(has bool, addr uint32) (uint64, bool) {
		if !has {
			return 0, false
		}
		if sc != nil {
			switch {
			case addr == r.hwpRegister && sc.HWPRequest.OK():
				return sc.HWPRequest.Raw, true
			case addr == regs.EPB().Address && sc.EPB.OK():
				return sc.EPB.Raw, true
			}
		}
		v, err := r.msr.ReadMSR(c.cpu, addr)
		if err != nil {
			ok = false
			return 0, false
		}
		return v, true
	}
	l := c.labels
	if c.req != nil {
		if v, has := read(true, c.req.Address); has {
			q, _ := regs.RequestFrom(c.req.Address, v)
			b.request(l, q.Min, q.Max, q.Desired, q.EPP)
		}
	}
	if v, has := read(c.hwpCap, hwp.MSR_IA32_HWP_CAPABILITIES); has {
		p := hwp.DecodeCapabilities(v)
		b.capabilities(l, p.Highest, p.Guaranteed, p.MostEfficient, p.Lowest)
	}
	if v, has := read(c.cppcCap, hwp.MSR_AMD_CPPC_CAP1); has {
		p := hwp.DecodeCPPCCap1(v)
		b.capabilities(l, p.Highest, p.Nominal, p.LowestNonlinear, p.Lowest)
	}
	if v, has := read(c.epbMSR, regs.EPB().Address); has {
		b.perf(descEPB, hwp.DecodeEPB(v), l...)
	}
	if c.epbFile {
		dir := "sys/devices/system/cpu/cpu" + strconv.Itoa(c.cpu) + "/power"
		s, err := readAttr(r.fs.Path(dir, "energy_perf_bias"))
		if v, perr := strconv.ParseInt(s, 10, 64); err == nil && perr == nil {
			b.add(descEPB, prometheus.GaugeValue, float64(v), l...)
		} else {
			ok = false
		}
	}
	return ok
}

// readAttr reads a sysfs attribute with one read(2) (the kernel returns a
// whole attribute on the first read; os.ReadFile adds an fstat and a read
// that returns 0, which at hundreds of files per refresh is most of the
// exporter's system calls) and trims the whitespace around it.
func readAttr(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var buf [256]byte
	n, err := f.Read(buf[:])
	if err != nil && err != io.EOF {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if n == len(buf) {
		rest, err := io.ReadAll(f)
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
		return strings.TrimSpace(string(buf[:]) + string(rest)), nil
	}
	return strings.TrimSpace(string(buf[:n])), nil
}
