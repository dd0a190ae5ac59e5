package exporter

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/msr"
	"github.com/hwpprobe/hwpprobe/snapshot"
	"github.com/hwpprobe/hwpprobe/sysfs"
	"github.com/hwpprobe/hwpprobe/topology"
)

// cpuSettings says which settings of one CPU the first snapshot found
// readable; a refresh reads only those (what was absent stays absent).
type cpuSettings struct {
	cpu    int
	labels []string // cpu, core_type, package
	// cpufreq: the CPU has a cpufreq policy with a scaling_driver.
	cpufreq bool
	// Registers: Intel HWP request and capabilities, AMD CPPC request and
	// CAP1, EPB from the register or else from sysfs.
	hwpReq, hwpCap, cppcReq, cppcCap, epbMSR, epbFile bool
}

// settingsReader reads, at each refresh, what every CPU is asked for:
// cpufreq's settings and limits and the request, capability and EPB
// registers. It reads only those files and registers, not a whole
// snapshot: topology, caches, CPUID and package registers do not change
// between refreshes and are not exported.
type settingsReader struct {
	fs   sysfs.FS
	msr  msr.Reader
	cpus []cpuSettings
}

// newSettingsReader takes from the first snapshot which settings each CPU
// has.
func newSettingsReader(fs sysfs.FS, m msr.Reader, s *snapshot.Snapshot, types map[int]topology.CoreType) *settingsReader {
	r := &settingsReader{fs: fs, msr: m}
	for _, g := range s.Groups {
		for i := range g.CPUs {
			c := &g.CPUs[i]
			reg := &c.Registers
			r.cpus = append(r.cpus, cpuSettings{
				cpu:     c.CPU,
				labels:  cpuLabelValues(c.CPU, c.Package, types[c.CPU]),
				cpufreq: c.Sysfs.ScalingDriver != nil,
				hwpReq:  reg.HWPRequest != nil,
				hwpCap:  reg.HWPCapabilities != nil,
				cppcReq: reg.HWPRequest == nil && reg.CPPCReq != nil,
				cppcCap: reg.HWPCapabilities == nil && reg.CPPCCap1 != nil,
				epbMSR:  reg.EPB != nil,
				epbFile: reg.EPB == nil && c.Sysfs.EPB != nil,
			})
		}
	}
	return r
}

// read adds every CPU's settings to b; it reports false when a file or
// register that was readable at start could not be read (that figure is
// then absent from this refresh).
func (r *settingsReader) read(b *builder) bool {
	ok := true
	for i := range r.cpus {
		c := &r.cpus[i]
		if c.cpufreq && !r.cpufreq(b, c) {
			ok = false
		}
		if !r.registers(b, c) {
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

// registers adds the request, capability and EPB fields.
func (r *settingsReader) registers(b *builder, c *cpuSettings) bool {
	ok := true
	read := func(has bool, addr uint32) (uint64, bool) {
		if !has {
			return 0, false
		}
		v, err := r.msr.ReadMSR(c.cpu, addr)
		if err != nil {
			ok = false
			return 0, false
		}
		return v, true
	}
	l := c.labels
	if v, has := read(c.hwpReq, hwp.MSR_IA32_HWP_REQUEST); has {
		q := hwp.DecodeRequest(v)
		b.request(l, q.Min, q.Max, q.Desired, q.EPP)
	}
	if v, has := read(c.cppcReq, hwp.MSR_AMD_CPPC_REQ); has {
		q := hwp.DecodeCPPCReq(v)
		b.request(l, q.Min, q.Max, q.Desired, q.EPP)
	}
	if v, has := read(c.hwpCap, hwp.MSR_IA32_HWP_CAPABILITIES); has {
		p := hwp.DecodeCapabilities(v)
		b.capabilities(l, p.Highest, p.Guaranteed, p.MostEfficient, p.Lowest)
	}
	if v, has := read(c.cppcCap, hwp.MSR_AMD_CPPC_CAP1); has {
		p := hwp.DecodeCPPCCap1(v)
		b.capabilities(l, p.Highest, p.Nominal, p.LowestNonlinear, p.Lowest)
	}
	if v, has := read(c.epbMSR, hwp.MSR_IA32_ENERGY_PERF_BIAS); has {
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
