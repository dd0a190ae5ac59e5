// SPDX-License-Identifier: Apache-2.0

package source

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/emu"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpuid"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
	"github.com/hwpprobe/hwpprobe/internal/kernel/topology"
	"github.com/hwpprobe/hwpprobe/internal/sampling/sampler"
)

// serverDesc writes a variant of emu/machines/spr-2s.yaml with pkgs
// packages of cores x 2 threads, for the benchmark's 128 and 512 CPUs.
func serverDesc(b *testing.B, pkgs, cores int) string {
	b.Helper()
	d, err := os.ReadFile("../../emu/machines/spr-2s.yaml")
	if err != nil {
		b.Fatal(err)
	}
	s := strings.Replace(string(d), "packages: 2", fmt.Sprintf("packages: %d", pkgs), 1)
	s = strings.Replace(s, "count: 56, threads: 2", fmt.Sprintf("count: %d, threads: 2", cores), 1)
	p := filepath.Join(b.TempDir(), "server.yaml")
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkSampleEmulated measures the sampler's cost per CPU per sample
// over emulated machines read in process (the emulator's ReadMSR stands
// in for /dev/cpu/N/msr; under hwpemu run each read is one pread(2),
// which bench/sampler/run.sh measures). Metrics: reads/cpu/sample (system
// calls the same reading makes on a real machine) and ns/cpu/sample
// (this process's CPU time, emulator included).
func BenchmarkSampleEmulated(b *testing.B) {
	cases := []struct {
		name string
		cpus int
		pkgs int
		load func(b *testing.B) string
	}{
		{"mtl-165u/cpus=14", 14, 1, func(*testing.B) string { return "mtl-165u" }},
		{"server/cpus=128", 128, 2, func(b *testing.B) string { return serverDesc(b, 2, 32) }},
		{"server/cpus=512", 512, 4, func(b *testing.B) string { return serverDesc(b, 4, 64) }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			m, err := emu.Load(c.load(b), emu.WithLoad(emu.ConstLoad{0.5}))
			if err != nil {
				b.Fatal(err)
			}
			if m.NumCPUs() != c.cpus {
				b.Fatalf("machine has %d CPUs, want %d", m.NumCPUs(), c.cpus)
			}
			topo := serverTopo(c.cpus, c.pkgs)
			if c.cpus == 14 {
				topo = mtl165uTopo()
			}
			set, err := Open(Config{Root: b.TempDir(), CPUs: topo, MSR: m, Emulated: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			defer set.Close()
			benchSampler(b, set, c.cpus)
		})
	}
}

// serverTopo places n CPUs in pkgs packages, SMT siblings adjacent.
func serverTopo(n, pkgs int) []sampler.Topo {
	per := n / pkgs
	t := make([]sampler.Topo, n)
	for i := range t {
		t[i] = sampler.Topo{CPU: i, Package: i / per, Core: i % per / 2}
	}
	return t
}

// counterMSR answers every register with a value that grows on each read:
// an MSR reader that costs next to nothing, to measure the sampler
// itself.
type counterMSR struct{ v []uint64 }

func (c *counterMSR) ReadMSR(cpu int, reg uint32) (uint64, error) {
	c.v[cpu] += 1000
	return c.v[cpu], nil
}

// BenchmarkSampleCompute is the sampler's own cost (Set.Read's
// bookkeeping and the figures) over a reader that does no I/O.
func BenchmarkSampleCompute(b *testing.B) {
	for _, c := range []struct{ cpus, pkgs int }{{14, 1}, {128, 2}, {512, 4}} {
		b.Run(fmt.Sprintf("cpus=%d", c.cpus), func(b *testing.B) {
			set, err := Open(Config{Root: b.TempDir(), CPUs: serverTopo(c.cpus, c.pkgs), MSR: &counterMSR{v: make([]uint64, c.cpus)}})
			if err != nil {
				b.Fatal(err)
			}
			defer set.Close()
			benchSampler(b, set, c.cpus)
		})
	}
}

// benchSampler runs Sample b.N times and reports per-CPU figures.
func benchSampler(b *testing.B, set *Set, n int) {
	s, err := sampler.New(set)
	if err != nil {
		b.Fatal(err)
	}
	var smp sampler.Sample
	// A first sample sizes smp; the loop then allocates nothing.
	time.Sleep(time.Millisecond)
	if err := s.Sample(&smp); err != nil {
		b.Fatal(err)
	}
	reads0 := set.Syscalls()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if err := s.Sample(&smp); err != nil {
			b.Fatal(err)
		}
	}
	el := time.Since(start)
	b.ReportMetric(float64(set.Syscalls()-reads0)/float64(b.N)/float64(n), "reads/cpu/sample")
	b.ReportMetric(float64(el.Nanoseconds())/float64(b.N)/float64(n), "ns/cpu/sample")
}

// BenchmarkSampleRealPerf samples this VM's real perf events (the msr
// PMU's tsc in one group per CPU: one read(2) per CPU per sample).
func BenchmarkSampleRealPerf(b *testing.B) {
	online, err := sysfs.NewFS("/").OnlineCPUs()
	if err != nil {
		b.Fatal(err)
	}
	topo, err := topology.Detect(sysfs.NewFS("/"), cpuid.Open("/"), online)
	if err != nil {
		b.Fatal(err)
	}
	set, err := Open(Config{Root: "/", CPUs: Placement(topo), Perf: true})
	if err != nil {
		b.Fatal(err)
	}
	defer set.Close()
	benchSampler(b, set, len(online))
}
