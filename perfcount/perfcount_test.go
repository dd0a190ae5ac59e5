// SPDX-License-Identifier: Apache-2.0

package perfcount

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hwpprobe/hwpprobe/internal/hostvariant"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
)

// writeTree creates files under a temporary root.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestProbePMUFixture reads PMU trees as the kernel publishes them. The
// power PMU files are those of arch/x86/events/rapl.c (event numbers
// energy-cores 0x01, energy-pkg 0x02, energy-ram 0x03, energy-gpu 0x04,
// energy-psys 0x05; scale "2.3283064365386962890625e-10", unit "Joules";
// format "event:config:0-7"); the msr PMU's are arch/x86/events/msr.c
// (tsc 0x00, aperf 0x01, mperf 0x02, smi 0x04; format "event:config:0-63").
func TestProbePMUFixture(t *testing.T) {
	const dev = DevicesDir + "/"
	root := writeTree(t, map[string]string{
		dev + "power/type":                     "24\n",
		dev + "power/cpumask":                  "0,8\n",
		dev + "power/format/event":             "config:0-7\n",
		dev + "power/events/energy-pkg":        "event=0x02\n",
		dev + "power/events/energy-pkg.scale":  "2.3283064365386962890625e-10\n",
		dev + "power/events/energy-pkg.unit":   "Joules\n",
		dev + "power/events/energy-cores":      "event=0x01\n",
		dev + "power/events/energy-cores.unit": "Joules\n",
		dev + "msr/type":                       "9\n",
		dev + "msr/format/event":               "config:0-63\n",
		dev + "msr/events/tsc":                 "event=0x00\n",
		dev + "msr/events/aperf":               "event=0x01\n",
		dev + "msr/events/mperf":               "event=0x02\n",
		// An uncore-style PMU with split fields (format as in
		// /sys/bus/event_source/devices/uncore_imc_0/format on Intel
		// servers: event config:0-7, umask config:8-15).
		dev + "uncore_x/type":          "15\n",
		dev + "uncore_x/format/event":  "config:0-7\n",
		dev + "uncore_x/format/umask":  "config:8-15\n",
		dev + "uncore_x/format/split":  "config1:0-3,8-11\n",
		dev + "uncore_x/events/cas":    "event=0x04,umask=0x03\n",
		dev + "uncore_x/events/splitv": "split=0xab\n",
	})
	tests := []struct {
		pmu  string
		want *PMU
	}{
		{"power", &PMU{Name: "power", Type: 24, CPUs: cpus.List{0, 8}, Events: []Event{
			{PMU: "power", Name: "energy-cores", Type: 24, Config: 1, Scale: 1, Unit: "Joules"},
			{PMU: "power", Name: "energy-pkg", Type: 24, Config: 2, Scale: 2.3283064365386962890625e-10, Unit: "Joules"},
		}}},
		{"msr", &PMU{Name: "msr", Type: 9, Events: []Event{
			{PMU: "msr", Name: "aperf", Type: 9, Config: 1, Scale: 1},
			{PMU: "msr", Name: "mperf", Type: 9, Config: 2, Scale: 1},
			{PMU: "msr", Name: "tsc", Type: 9, Config: 0, Scale: 1},
		}}},
		{"uncore_x", &PMU{Name: "uncore_x", Type: 15, Events: []Event{
			{PMU: "uncore_x", Name: "cas", Type: 15, Config: 0x0304, Scale: 1},
			// 0xab: low nibble 0xb to bits 0-3, high nibble 0xa to bits 8-11.
			{PMU: "uncore_x", Name: "splitv", Type: 15, Config1: 0x0a0b, Scale: 1},
		}}},
	}
	for _, tt := range tests {
		got, err := ProbePMU(root, tt.pmu)
		if err != nil {
			t.Fatalf("ProbePMU(%s): %v", tt.pmu, err)
		}
		if d := cmp.Diff(tt.want, got, cmpopts.IgnoreUnexported(PMU{})); d != "" {
			t.Errorf("ProbePMU(%s) (-want +got):\n%s", tt.pmu, d)
		}
	}
	if _, err := ProbePMU(root, "cpu"); !errors.Is(err, ErrNoPMU) {
		t.Errorf("ProbePMU(cpu) on a tree without it: %v, want ErrNoPMU", err)
	}
	msr, _ := ProbePMU(root, "msr")
	if _, err := msr.Event("smi"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("msr.Event(smi) not listed: %v, want ErrUnsupported", err)
	}
}

func TestProbePMUBadFiles(t *testing.T) {
	const dev = DevicesDir + "/"
	tests := []struct {
		name  string
		files map[string]string
	}{
		{"bad type", map[string]string{dev + "p/type": "x\n"}},
		{"bad format", map[string]string{dev + "p/type": "1\n", dev + "p/format/event": "config:9-3\n"}},
		{"unknown term", map[string]string{dev + "p/type": "1\n", dev + "p/format/event": "config:0-7\n", dev + "p/events/e": "umask=1\n"}},
		{"bad scale", map[string]string{dev + "p/type": "1\n", dev + "p/format/event": "config:0-7\n", dev + "p/events/e": "event=1\n", dev + "p/events/e.scale": "many\n"}},
	}
	for _, tt := range tests {
		root := writeTree(t, tt.files)
		if _, err := ProbePMU(root, "p"); err == nil {
			t.Errorf("%s: ProbePMU succeeded, want an error", tt.name)
		}
	}
}

func TestDelta(t *testing.T) {
	// perf stat's scaling (tools/perf/util/stat.c perf_counts_values__scale:
	// val = val * ena / run when run < ena).
	tests := []struct {
		name      string
		prev, cur Reading
		want      Count
	}{
		{"full time", Reading{100, 100, []uint64{1000}}, Reading{200, 200, []uint64{3000}}, Count{Value: 2000}},
		{"half time", Reading{100, 100, []uint64{1000}}, Reading{300, 200, []uint64{3000}}, Count{Value: 4000, Multiplexed: true}},
		{"never ran", Reading{100, 50, []uint64{1000}}, Reading{300, 50, []uint64{1000}}, Count{NotCounted: true}},
		{"wraps at 2^64", Reading{0, 0, []uint64{^uint64(0) - 9}}, Reading{10, 10, []uint64{10}}, Count{Value: 20}},
	}
	for _, tt := range tests {
		if got := Delta(&tt.prev, &tt.cur, 0); got != tt.want {
			t.Errorf("%s: Delta = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// The tests below use the running kernel: CI runs as root on the same kind
// of VM, so they do not skip.

// TestRealMSRPMU, under every host variant (the bare one has no msr PMU:
// ErrNoPMU), opens the msr PMU's tsc on every online CPU together with
// software events, and checks that the TSC advances by about the elapsed
// time times the TSC frequency the kernel reports.
func TestRealMSRPMU(t *testing.T) {
	hostvariant.Each(t, realMSRPMU)
}

func realMSRPMU(t *testing.T, v hostvariant.Variant) {
	msr, err := ProbePMU("/", "msr")
	if slices.Contains(v.Mask.Hide, "/sys/bus/event_source/devices/msr") {
		if !errors.Is(err, ErrNoPMU) {
			t.Errorf("msr PMU hidden: ProbePMU %v, want ErrNoPMU", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("the msr PMU should be registered on these VMs: %v", err)
	}
	tsc, err := msr.Event("tsc")
	if err != nil {
		t.Fatal(err)
	}
	taskClock, _ := Software("cpu-clock")
	cs, _ := Software("context-switches")
	online, err := sysfs.NewFS("/").OnlineCPUs()
	if err != nil {
		t.Fatal(err)
	}
	for _, cpu := range online {
		g, err := OpenGroup(-1, cpu, []Event{tsc, taskClock, cs})
		if err != nil {
			t.Fatalf("cpu%d: %v", cpu, err)
		}
		if len(g.Skipped()) != 0 {
			t.Fatalf("cpu%d: skipped %v", cpu, g.Skipped())
		}
		a, b := g.NewReading(), g.NewReading()
		if err := g.Read(&a); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		time.Sleep(50 * time.Millisecond)
		if err := g.Read(&b); err != nil {
			t.Fatal(err)
		}
		elapsed := time.Since(start)
		g.Close()
		dt := Delta(&a, &b, g.Index("tsc"))
		dclk := Delta(&a, &b, g.Index("cpu-clock"))
		if dt.Value == 0 || dt.Multiplexed {
			t.Errorf("cpu%d: tsc delta %+v, want a full-time count", cpu, dt)
		}
		// cpu-clock counts ns while the event is enabled on this CPU:
		// never more than the wall time between the reads (plus slack
		// for the read itself).
		if dclk.Value == 0 || time.Duration(dclk.Value) > elapsed+10*time.Millisecond {
			t.Errorf("cpu%d: cpu-clock %v over a %v window", cpu, time.Duration(dclk.Value), elapsed)
		}
		// The TSC frequency is at least 1 GHz on any x86-64 machine of
		// the last 15 years and below 10 GHz: 50 ms gives 5e7..5e8 ticks.
		if mhz := float64(dt.Value) / elapsed.Seconds() / 1e6; mhz < 1000 || mhz > 10000 {
			t.Errorf("cpu%d: TSC %.0f MHz, want 1000-10000", cpu, mhz)
		}
	}
}

// TestRealUnsupportedEvents: these VMs have no hardware PMU, so cycles is
// ErrUnsupported; a group whose other events open keeps them and lists
// cycles as skipped.
func TestRealUnsupportedEvents(t *testing.T) {
	cycles, _ := Hardware("cycles")
	instr, _ := Hardware("instructions")
	_, err := OpenGroup(-1, 0, []Event{cycles})
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("OpenGroup(cycles) = %v, want ErrUnsupported on a VM without a hardware PMU", err)
	}
	clk, _ := Software("cpu-clock")
	g, err := OpenGroup(-1, 0, []Event{cycles, clk, instr})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if got := g.Events(); len(got) != 1 || got[0].Name != "cpu-clock" {
		t.Errorf("events opened = %v, want only cpu-clock", got)
	}
	var skipped []string
	for _, s := range g.Skipped() {
		if !errors.Is(s.Err, ErrUnsupported) {
			t.Errorf("%s: %v, want ErrUnsupported", s.Event, s.Err)
		}
		skipped = append(skipped, s.Event.Name)
	}
	if d := cmp.Diff([]string{"cycles", "instructions"}, skipped); d != "" {
		t.Errorf("skipped (-want +got):\n%s", d)
	}
	if _, err := Hardware("bogus"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Hardware(bogus) = %v", err)
	}
}

// TestRealPowerPMU, under every host variant: where the power PMU exists
// (Intel VMs list energy-psys, which reads 0 J) its events open on the
// cpumask CPUs with scale and unit; where it does not, ProbePMU says
// ErrNoPMU.
func TestRealPowerPMU(t *testing.T) {
	hostvariant.Each(t, realPowerPMU)
}

func realPowerPMU(t *testing.T, v hostvariant.Variant) {
	p, err := ProbePMU("/", "power")
	if want := v.Mask.Power != nil; v.Name != "host" && want != (err == nil) {
		t.Fatalf("ProbePMU(power): %v; the variant has a power PMU: %v", err, want)
	}
	if errors.Is(err, ErrNoPMU) {
		if _, serr := os.Stat("/sys/bus/event_source/devices/power"); serr == nil {
			t.Fatalf("ErrNoPMU although the power PMU directory exists")
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(p.CPUs) == 0 {
		t.Fatalf("power PMU without a cpumask")
	}
	for _, e := range p.Events {
		if e.Unit != "Joules" || e.Scale == 1 {
			t.Errorf("%s: unit %q scale %g, want Joules and a 2^-32 scale", e, e.Unit, e.Scale)
		}
	}
	g, err := OpenGroup(-1, p.CPUs[0], p.Events)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	r := g.NewReading()
	if err := g.Read(&r); err != nil {
		t.Fatal(err)
	}
}

func TestReadAllocs(t *testing.T) {
	clk, _ := Software("cpu-clock")
	cs, _ := Software("context-switches")
	g, err := OpenGroup(-1, 0, []Event{clk, cs})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	r := g.NewReading()
	if n := testing.AllocsPerRun(100, func() {
		if err := g.Read(&r); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Group.Read allocates %v times per call, want 0", n)
	}
}

func BenchmarkGroupRead(b *testing.B) {
	msr, err := ProbePMU("/", "msr")
	if err != nil {
		b.Fatal(err)
	}
	tsc, _ := msr.Event("tsc")
	clk, _ := Software("cpu-clock")
	g, err := OpenGroup(-1, 0, []Event{tsc, clk})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	r := g.NewReading()
	b.ReportAllocs()
	for b.Loop() {
		if err := g.Read(&r); err != nil {
			b.Fatal(err)
		}
	}
}
