// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"regexp"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/kernel/topology"
	"github.com/hwpprobe/hwpprobe/internal/machine/regs"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
)

const ns = "hwpprobe_"

var (
	cpuLabels = []string{"cpu", "core_type", "package"}

	descDelivered = prometheus.NewDesc(ns+"cpu_delivered_frequency_hertz", "Average frequency over the last interval, APERF/interval (turbostat Avg_MHz).", cpuLabels, nil)
	descBusyFreq  = prometheus.NewDesc(ns+"cpu_busy_frequency_hertz", "Frequency while not idle over the last interval, TSC_MHz x APERF/MPERF (turbostat Bzy_MHz).", cpuLabels, nil)
	descBusy      = prometheus.NewDesc(ns+"cpu_busy_ratio", "Share of the last interval the CPU was not idle, MPERF/TSC (turbostat Busy%/100).", cpuLabels, nil)
	descTSC       = prometheus.NewDesc(ns+"cpu_tsc_frequency_hertz", "TSC rate over the last interval (turbostat TSC_MHz).", cpuLabels, nil)
	descCoreTemp  = prometheus.NewDesc(ns+"cpu_temperature_celsius", "Core temperature: TjMax minus IA32_THERM_STATUS's readout.", cpuLabels, nil)

	descCPUFreqInfo = prometheus.NewDesc(ns+"cpufreq_info", "The cpufreq driver, governor and EPP string of a CPU (value 1).", append(cpuLabels[:3:3], "driver", "governor", "epp"), nil)
	descScalingMin  = prometheus.NewDesc(ns+"cpufreq_scaling_min_hertz", "cpufreq scaling_min_freq.", cpuLabels, nil)
	descScalingMax  = prometheus.NewDesc(ns+"cpufreq_scaling_max_hertz", "cpufreq scaling_max_freq.", cpuLabels, nil)
	descInfoMin     = prometheus.NewDesc(ns+"cpufreq_cpuinfo_min_hertz", "cpufreq cpuinfo_min_freq.", cpuLabels, nil)
	descInfoMax     = prometheus.NewDesc(ns+"cpufreq_cpuinfo_max_hertz", "cpufreq cpuinfo_max_freq.", cpuLabels, nil)

	// requestNames names the request registers in the request
	// metrics' help: "IA32_HWP_REQUEST (AMD: ...)".
	requestNames = regs.RequestOf(regs.Intel).Name + " (AMD: " + regs.RequestOf(regs.AMD).Name + ")"

	descReqMin     = prometheus.NewDesc(ns+"hwp_request_min_perf", "Minimum performance field of "+requestNames+".", cpuLabels, nil)
	descReqMax     = prometheus.NewDesc(ns+"hwp_request_max_perf", "Maximum performance field of "+requestNames+".", cpuLabels, nil)
	descReqDesired = prometheus.NewDesc(ns+"hwp_request_desired_perf", "Desired performance field of "+requestNames+"; 0 lets the hardware choose.", cpuLabels, nil)
	descReqEPP     = prometheus.NewDesc(ns+"hwp_request_epp", "Energy-performance preference field of "+requestNames+": 0 performance .. 255 power.", cpuLabels, nil)
	descCapHighest = prometheus.NewDesc(ns+"hwp_capabilities_highest_perf", "Highest performance of IA32_HWP_CAPABILITIES (AMD: MSR_AMD_CPPC_CAP1).", cpuLabels, nil)
	descCapGuar    = prometheus.NewDesc(ns+"hwp_capabilities_guaranteed_perf", "Guaranteed performance of IA32_HWP_CAPABILITIES (AMD: nominal performance of MSR_AMD_CPPC_CAP1).", cpuLabels, nil)
	descCapEff     = prometheus.NewDesc(ns+"hwp_capabilities_most_efficient_perf", "Most efficient performance of IA32_HWP_CAPABILITIES (AMD: lowest non-linear performance).", cpuLabels, nil)
	descCapLowest  = prometheus.NewDesc(ns+"hwp_capabilities_lowest_perf", "Lowest performance of IA32_HWP_CAPABILITIES (AMD: MSR_AMD_CPPC_CAP1).", cpuLabels, nil)
	descEPB        = prometheus.NewDesc(ns+"energy_perf_bias", "IA32_ENERGY_PERF_BIAS (0 performance .. 15 power saving), from the register, else from sysfs energy_perf_bias.", cpuLabels, nil)

	descEnergy    = prometheus.NewDesc(ns+"energy_joules_total", "RAPL energy of a domain since the exporter started (counter wraps corrected).", []string{"package", "domain"}, nil)
	descPkgTemp   = prometheus.NewDesc(ns+"package_temperature_celsius", "Package temperature: TjMax minus IA32_PACKAGE_THERM_STATUS's readout.", []string{"package"}, nil)
	descLimitSecs = prometheus.NewDesc(ns+"limit_reason_seconds_total", "Seconds a limit reason of MSR_CORE_PERF_LIMIT_REASONS was active, sampled at each refresh and counted for the interval before it.", []string{"package", "reason"}, nil)

	descWrites     = prometheus.NewDesc(ns+"msr_writes_total", "Register writes seen by the eBPF tracer (origin kernel) or made by an emulated machine's model (origin emulated), by register and writing command.", []string{"msr", "register", "comm", "origin"}, nil)
	descWritesLost = prometheus.NewDesc(ns+"msr_writes_lost_total", "Traced register writes lost (ring buffer full, or rotated out of an emulated machine's log).", nil, nil)

	descEmulated       = prometheus.NewDesc(ns+"emulated_info", "Present when the machine is emulated by hwpemu: every figure is emulated (value 1).", []string{"machine"}, nil)
	descScrapeDuration = prometheus.NewDesc(ns+"scrape_duration_seconds", "How long the last refresh of the figures took.", nil, nil)
	descScrapeErrors   = prometheus.NewDesc(ns+"scrape_errors_total", "Refreshes in which a source failed.", nil, nil)
	descRefreshes      = prometheus.NewDesc(ns+"refreshes_total", "Refreshes of the figures (at most one per minimum interval, however many scrapers).", nil, nil)
)

// allDescs lists every metric the exporter can serve.
var allDescs = []*prometheus.Desc{
	descDelivered,
	descBusyFreq,
	descBusy,
	descTSC,
	descCoreTemp,
	descCPUFreqInfo,
	descScalingMin,
	descScalingMax,
	descInfoMin,
	descInfoMax,
	descReqMin,
	descReqMax,
	descReqDesired,
	descReqEPP,
	descCapHighest,
	descCapGuar,
	descCapEff,
	descCapLowest,
	descEPB,
	descEnergy,
	descPkgTemp,
	descLimitSecs,
	descExcursion,
	descExcursionSecs,
	descWrites,
	descWritesLost,
	descEmulated,
	descScrapeDuration,
	descScrapeErrors,
	descRefreshes,
}

var fqNameRE = regexp.MustCompile(`fqName: "([^"]+)"`)

// MetricNames returns the name of every metric the exporter can serve
// (a machine serves those it has figures for).
func MetricNames() []string {
	names := make([]string, 0, len(allDescs))
	for _, d := range allDescs {
		if m := fqNameRE.FindStringSubmatch(d.String()); m != nil {
			names = append(names, m[1])
		}
	}
	return names
}

// domains names the RAPL domains in sampler.Package's order of watts.
var domains = [...]string{"package", "core", "gpu", "dram", "psys"}

// state holds the counters accumulated over refreshes.
type state struct {
	sample    sampler.Sample
	joules    [][len(domains)]float64
	hasJoules [][len(domains)]bool
	limits    map[limitKey]float64
	exc       excursions      // IA32_HWP_STATUS per CPU (hwpstatus.go)
	table     *hwp.LimitTable // turbostat's names for the model; nil: "bitN"
	errors    float64
	refreshes float64
}

type limitKey struct {
	pkg    int
	reason string
}

func newState(st *sampler.Setup) state {
	return state{
		joules:    make([][len(domains)]float64, len(st.Packages)),
		hasJoules: make([][len(domains)]bool, len(st.Packages)),
		limits:    map[limitKey]float64{},
	}
}

// builder collects the metrics of one refresh.
type builder struct{ ms []prometheus.Metric }

func (b *builder) add(d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
	b.ms = append(b.ms, prometheus.MustNewConstMetric(d, t, v, labels...))
}

func (b *builder) value(d *prometheus.Desc, v sampler.Value, scale float64, labels ...string) {
	if v.OK() {
		b.add(d, prometheus.GaugeValue, v.V*scale, labels...)
	}
}

func (b *builder) perf(d *prometheus.Desc, v uint8, labels ...string) {
	b.add(d, prometheus.GaugeValue, float64(v), labels...)
}

// refresh samples every source once and builds the metrics.
func (c *Collector) refresh(start time.Time) []prometheus.Metric {
	b := &builder{}
	st := &c.st
	st.refreshes++
	smp := &st.sample
	failed := false
	if err := c.smp.Sample(smp); err != nil {
		failed, smp = true, nil
	} else {
		b.sampled(&st.sample)
		st.accumulate(&st.sample)
		st.exc.add(&st.sample)
		b.counters(st)
		b.excursions(&st.exc, &st.sample)
	}
	if !c.settings.read(b, smp) {
		failed = true
	}
	if c.writes != nil {
		if !c.writes.collect(b) {
			failed = true
		}
	}
	if failed {
		st.errors++
	}
	if e := c.emulated; e != "" {
		b.add(descEmulated, prometheus.GaugeValue, 1, e)
	}
	b.add(descScrapeDuration, prometheus.GaugeValue, time.Since(start).Seconds())
	b.add(descScrapeErrors, prometheus.CounterValue, st.errors)
	b.add(descRefreshes, prometheus.CounterValue, st.refreshes)
	return b.ms
}

func cpuLabelValues(cpu, pkg int, t topology.CoreType) []string {
	return []string{strconv.Itoa(cpu), string(t), strconv.Itoa(pkg)}
}

// sampled adds the figures over the interval since the last refresh.
func (b *builder) sampled(s *sampler.Sample) {
	for i := range s.CPUs {
		c := &s.CPUs[i]
		l := cpuLabelValues(c.CPU, c.Package, c.Type)
		b.value(descDelivered, c.AvgMHz, 1e6, l...)
		b.value(descBusyFreq, c.BzyMHz, 1e6, l...)
		b.value(descBusy, c.BusyPct, 0.01, l...)
		b.value(descTSC, c.TSCMHz, 1e6, l...)
		b.value(descCoreTemp, c.CoreTmp, 1, l...)
	}
	for i := range s.Packages {
		b.value(descPkgTemp, s.Packages[i].PkgTmp, 1, strconv.Itoa(s.Packages[i].Package))
	}
}

func (b *builder) request(l []string, lo, hi, desired, epp uint8) {
	b.perf(descReqMin, lo, l...)
	b.perf(descReqMax, hi, l...)
	b.perf(descReqDesired, desired, l...)
	b.perf(descReqEPP, epp, l...)
}

func (b *builder) capabilities(l []string, highest, guaranteed, efficient, lowest uint8) {
	b.perf(descCapHighest, highest, l...)
	b.perf(descCapGuar, guaranteed, l...)
	b.perf(descCapEff, efficient, l...)
	b.perf(descCapLowest, lowest, l...)
}

// energyValues returns a package's power figures in the order of domains.
func energyValues(p *sampler.Package) [len(domains)]sampler.Value {
	return [...]sampler.Value{p.PkgWatt, p.CorWatt, p.GFXWatt, p.RAMWatt, p.SysWatt}
}

// accumulate adds an interval's energy and limit-reason time to the
// counters.
func (st *state) accumulate(s *sampler.Sample) {
	dt := s.Interval.Seconds()
	for i := range s.Packages {
		p := &s.Packages[i]
		for d, w := range energyValues(p) {
			if w.OK() {
				st.joules[i][d] += w.V * dt
				st.hasJoules[i][d] = true
			}
		}
		if p.LimitReasons.OK() {
			st.limitTime(i, p.LimitReasons.Raw, dt)
		}
	}
}

// limitTime adds dt to each reason active in MSR_CORE_PERF_LIMIT_REASONS
// value v of package index i: with turbostat's names where it has a table
// for the model (every reason of the table is then counted, from 0), else
// as "bitN" for the active bits 15:0 (as package analysis names them).
func (st *state) limitTime(i int, v uint64, dt float64) {
	if st.table != nil {
		for _, r := range st.table.Reasons {
			st.limits[limitKey{i, r.Name}] += 0
		}
	}
	active, _ := hwp.LimitReasonNames(v, st.table)
	for _, r := range active {
		st.limits[limitKey{i, r}] += dt
	}
}

// counters adds the accumulated energy and limit-reason counters.
func (b *builder) counters(st *state) {
	pkgs := st.sample.Packages
	for i := range pkgs {
		pkg := strconv.Itoa(pkgs[i].Package)
		for d, name := range domains {
			if st.hasJoules[i][d] {
				b.add(descEnergy, prometheus.CounterValue, st.joules[i][d], pkg, name)
			}
		}
	}
	for k, v := range st.limits {
		b.add(descLimitSecs, prometheus.CounterValue, v, strconv.Itoa(pkgs[k.pkg].Package), k.reason)
	}
}
