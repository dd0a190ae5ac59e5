// SPDX-License-Identifier: Apache-2.0

// Package exporter serves hwpprobe's figures as Prometheus metrics: what
// the power-management registers are asked for (HWP / CPPC request, EPB,
// cpufreq governor, EPP and driver) and what the CPUs deliver (APERF/MPERF
// frequencies, busy ratio, RAPL energy, temperatures, limit reasons), with
// the kernel's register writes counted by eBPF.
//
// It reads only through the project's sources: package source and the
// sampler for figures over time (deltas between refreshes), package
// snapshot once at start for which settings each CPU has (each refresh
// then reads only those files and registers), package ebpf for register
// writes. A refresh happens on a scrape at most once per
// Config.MinInterval; scrapes in
// between get the cached metrics, so many scrapers do not multiply the
// reads. Figures the machine cannot give are absent, never 0.
package exporter

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hwpprobe/hwpprobe/ebpf"
	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpuid"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
	"github.com/hwpprobe/hwpprobe/internal/machine/snapshot"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
	"github.com/hwpprobe/hwpprobe/internal/sampling/source"
	"github.com/hwpprobe/hwpprobe/msr"
)

// DefaultMinInterval is the shortest time between two refreshes.
const DefaultMinInterval = time.Second

// ErrBadCPUList is wrapped by Open's error for a bad -C selection.
var ErrBadCPUList = errors.New("bad CPU selection")

// Config selects what the exporter reads.
type Config struct {
	// Root is the system root ("/" normally).
	Root string
	// CPUs is a -C CPU list ("" for every online CPU).
	CPUs string
	// MSRs are the registers whose writes the eBPF tracer counts.
	MSRs []uint32
	// MinInterval is the shortest time from the end of a refresh to the
	// start of the next (0: DefaultMinInterval).
	MinInterval time.Duration
}

// Collector is a prometheus.Collector over the opened sources. It is safe
// for concurrent scrapes.
type Collector struct {
	cfg   Config
	fs    sysfs.FS
	list  cpus.List
	set   *source.Set
	smp   *sampler.Sampler
	msr   *msr.Dev
	cpuid *cpuid.Dev
	notes []string
	// settings reads what each CPU is asked for at each refresh;
	// emulated is the hwpemu machine's name ("" on real hardware).
	settings *settingsReader
	emulated string

	writes    *writeCounter
	stopTrace context.CancelFunc
	traceDone chan struct{}

	mu     sync.Mutex
	last   time.Time
	cached []prometheus.Metric
	st     state
}

// Open opens every source for cfg's CPUs as the current user (root) and
// reads them once, so that the register devices stay open when the
// process later drops its privileges. What the machine lacks is in
// Notes; only a bad CPU selection or an unreadable CPU list is an error.
func Open(cfg Config) (*Collector, error) {
	if cfg.Root == "" {
		cfg.Root = "/"
	}
	if cfg.MinInterval <= 0 {
		cfg.MinInterval = DefaultMinInterval
	}
	c := &Collector{cfg: cfg, fs: sysfs.NewFS(cfg.Root)}
	online, err := sysfs.NewFS(cfg.Root).OnlineCPUs()
	if err != nil {
		return nil, fmt.Errorf("online CPUs: %w", err)
	}
	present, _ := sysfs.NewFS(cfg.Root).PresentCPUs()
	if c.list, err = cpus.Select(cfg.CPUs, online, present); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadCPUList, err)
	}
	if c.set, err = source.OpenCPUs(cfg.Root, c.fs, c.list); err != nil {
		return nil, err
	}
	if c.smp, err = sampler.New(c.set); err != nil {
		c.set.Close()
		return nil, err
	}
	for _, n := range c.set.Setup().Notes {
		c.notes = append(c.notes, n.Figure+": "+n.Reason)
	}
	c.msr, c.cpuid = msr.Open(cfg.Root), cpuid.Open(cfg.Root)
	// The first snapshot opens the register devices of every CPU and
	// finds which settings each has.
	snap, err := snapshot.Build(snapshot.Sources{FS: c.fs, MSR: c.msr, CPUID: c.cpuid, EUID: os.Geteuid()}, c.list.String())
	if err != nil {
		c.Close()
		return nil, err
	}
	c.settings = newSettingsReader(c.fs, c.msr, snap, c.set.Setup())
	c.emulated = c.fs.Emulated()
	c.openTracer()
	c.st = newState(c.set.Setup())
	if t := c.set.Setup().LimitTable; t != nil { // the SDM's client table (hwp.SDMCoreLimitTable)
		c.st.table = t
	} else if t, ok := hwp.CoreLimitTable(uint32(snap.Machine.Family), uint32(snap.Machine.Model)); ok {
		c.st.table = &t
	}
	c.firstInterval()
	return c, nil
}

// firstIntervalLen is how long Open samples the counters for before it
// says which energy counters do not advance.
const firstIntervalLen = 100 * time.Millisecond

// firstInterval samples the counters once firstIntervalLen after Open's
// first reading, counts it, and notes the energy domains whose counter
// did not advance (a VM's power PMU has an energy-psys that reads zero):
// they are absent from the metrics until they do.
func (c *Collector) firstInterval() {
	time.Sleep(firstIntervalLen)
	if err := c.smp.Sample(&c.st.sample); err != nil {
		return
	}
	c.st.accumulate(&c.st.sample)
	c.st.exc.add(&c.st.sample)
	for _, p := range c.st.sample.Packages {
		for d, w := range energyValues(&p) {
			if w.Src != sampler.SrcNone && !w.OK() {
				c.notes = append(c.notes, fmt.Sprintf("energy %s of package %d: the counter did not advance in %v; absent until it does",
					domains[d], p.Package, firstIntervalLen))
			}
		}
	}
}

// openTracer starts the eBPF tracer (and, under hwpemu, the emulated
// machine's write log) in the background; without it the write counters
// are absent and a note says why.
func (c *Collector) openTracer() {
	if len(c.cfg.MSRs) == 0 {
		return
	}
	opts := ebpf.Options{MSRs: c.cfg.MSRs}
	tfs, err := ebpf.FindTraceFS(c.cfg.Root)
	if err == nil {
		opts.TraceFS = tfs
		var src ebpf.Source
		if src, err = ebpf.OpenSources(c.cfg.Root, opts); err == nil {
			c.startTracer(src)
			return
		}
	}
	c.notes = append(c.notes, "MSR writes: "+err.Error())
}

func (c *Collector) startTracer(src ebpf.Source) {
	c.writes = newWriteCounter(src)
	ctx, cancel := context.WithCancel(context.Background())
	c.stopTrace, c.traceDone = cancel, make(chan struct{})
	go func() {
		defer close(c.traceDone)
		if err := src.Run(ctx, c.writes.event); err != nil && ctx.Err() == nil {
			c.writes.fail(err)
		}
	}()
}

// Notes says, one line per figure, what this machine cannot give and why.
func (c *Collector) Notes() []string { return c.notes }

// Emulated is the emulated machine's name ("" on real hardware).
func (c *Collector) Emulated() string { return c.emulated }

// Close stops the tracer and closes every source.
func (c *Collector) Close() error {
	var errs []error
	if c.stopTrace != nil {
		c.stopTrace()
		<-c.traceDone
		errs = append(errs, c.writes.src.Close())
	}
	if c.msr != nil {
		errs = append(errs, c.msr.Close())
	}
	if c.cpuid != nil {
		errs = append(errs, c.cpuid.Close())
	}
	errs = append(errs, c.set.Close())
	return errors.Join(errs...)
}

// Describe sends nothing: the metrics depend on what the machine has,
// so the collector is unchecked.
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

// Collect refreshes the metrics when the last refresh is at least
// MinInterval old and sends them.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c.metrics() {
		ch <- m
	}
}

func (c *Collector) metrics() []prometheus.Metric {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cached != nil && time.Since(c.last) < c.cfg.MinInterval {
		return c.cached
	}
	c.cached = c.refresh(time.Now())
	// The interval runs from the end of a refresh: a refresh slower than
	// MinInterval is not followed at once by the next.
	c.last = time.Now()
	return c.cached
}
