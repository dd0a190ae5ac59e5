// SPDX-License-Identifier: Apache-2.0

package emu

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/testbin"
	"github.com/hwpprobe/hwpprobe/internal/tooltable"
)

// The kernel's own tools (Debian's linux-cpupower: turbostat,
// x86_energy_perf_policy) run against the emulated machines through
// `hwpemu run`: every MSR they read must be answered (turbostat exits on
// the first failure), and what they print must be the model's values.
// Needs root, FUSE, cc and linux-cpupower, as CI has.

type toolEnv struct {
	hwpemu string
	env    []string // LD_PRELOAD and the cpuid shim's variables
}

// setupTools builds the affinity library turbostat runs under and
// returns the peer environments, one per CPUID path this host can take.
func setupTools(t *testing.T) []testbin.Peer {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("the kernel-tool tests need root (hwpemu run mounts FUSE in a private namespace); CI runs as root")
	}
	aff := filepath.Join(t.TempDir(), "affinity.so")
	if out, err := exec.Command("cc", "-shared", "-fPIC", "-O2", "-o", aff, "testdata/affinity.c").CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	return testbin.PeerTools(t, aff)
}

// eachPeer runs f as a subtest per CPUID path, with hwpemu built once.
func eachPeer(t *testing.T, f func(t *testing.T, e toolEnv)) {
	t.Helper()
	peers := setupTools(t)
	bin, err := testbin.Build(t.TempDir(), "../../cmd/hwpemu")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range peers {
		p.Run(t, func(t *testing.T) { f(t, toolEnv{hwpemu: bin, env: p.Env}) })
	}
}

// run runs argv in machine's namespace and returns its output.
func (e toolEnv) run(t *testing.T, machine string, argv ...string) string {
	t.Helper()
	return e.runBusy(t, "0.5", machine, argv...)
}

// runBusy is run with the CPUs' busy fractions (hwpemu run --busy).
func (e toolEnv) runBusy(t *testing.T, busy, machine string, argv ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// A fixed load (--busy): with the host's varying load, APERF and MPERF
	// read one FUSE round trip apart cover different loads, and
	// turbostat's Bzy_MHz was seen 8% off (1839 for 1700 MHz) on a busy VM.
	args := append([]string{"run", "--busy", busy, machine, "--", "env"}, e.env...)
	cmd := exec.CommandContext(ctx, e.hwpemu, append(args, argv...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", machine, argv, err, out)
	}
	return string(out)
}

// bzyMHz parses turbostat's "CPU Bzy_MHz" table.
func bzyMHz(t *testing.T, out string) map[int]float64 {
	t.Helper()
	got := map[int]float64{}
	row := regexp.MustCompile(`(?m)^(\d+)\t(\d+)$`)
	for _, m := range row.FindAllStringSubmatch(out, -1) {
		cpu, _ := strconv.Atoi(m[1])
		mhz, _ := strconv.ParseFloat(m[2], 64)
		got[cpu] = mhz
	}
	return got
}

func TestTurbostat(t *testing.T) {
	eachPeer(t, testTurbostat)
}

func testTurbostat(t *testing.T, e toolEnv) {
	for _, tc := range []struct {
		machine string
		// Bzy_MHz per CPU from the model (docs/emulator.md): turbostat
		// computes it as base (CPUID 0x16) x dAPERF/dMPERF on Intel. AMD
		// has no CPUID base frequency, so turbostat uses the host's TSC
		// there and only the run itself is checked.
		want map[int]float64
	}{
		{"mtl-165u", map[int]float64{0: 3840, 3: 3840, 4: 2900, 11: 2900, 12: 1700, 13: 1700}},
		{"spr-2s", map[int]float64{0: 3400, 223: 3400}},
		{"zen4-amd-pstate", nil},
	} {
		t.Run(tc.machine, func(t *testing.T) {
			// --debug makes turbostat read and print every register it
			// knows for the model.
			out := e.run(t, tc.machine, "turbostat", "--debug", "--num_iterations", "1", "--interval", "1", "--show", "CPU,Bzy_MHz")
			if strings.Contains(out, "read failed") || !strings.Contains(out, "Bzy_MHz") {
				t.Fatalf("turbostat did not finish:\n%s", out)
			}
			got := bzyMHz(t, out)
			for cpu, want := range tc.want {
				// Under a fixed load the ratio is exact up to
				// turbostat's rounding: within 3% (the core types
				// differ by 25% or more).
				if g, ok := got[cpu]; !ok || g < want*0.97 || g > want*1.03 {
					t.Errorf("CPU %d Bzy_MHz %v, want %v\n%s", cpu, g, want, out)
				}
			}
		})
	}
}

// x86_energy_perf_policy decodes the registers the emulated intel_pstate
// wrote: at start, after the performance governor, after EPB "power" and
// no_turbo (expected values: TestIntelGovernorSwitch, TestIntelLimits).
func TestX86EnergyPerfPolicy(t *testing.T) {
	eachPeer(t, testX86EnergyPerfPolicy)
}

func testX86EnergyPerfPolicy(t *testing.T, e toolEnv) {
	out := e.run(t, "mtl-165u", "sh", "-c", `
P=/sys/devices/system/cpu/cpufreq/policy0
x86_energy_perf_policy --cpu 0,4,12
echo performance > $P/scaling_governor
x86_energy_perf_policy --cpu 0
echo powersave > $P/scaling_governor
echo power > /sys/devices/system/cpu/cpu0/power/energy_perf_bias
echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo
x86_energy_perf_policy --cpu 0`)
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "cpu") {
			lines = append(lines, l)
		}
	}
	want := []string{
		"cpu0: EPB 6",
		"cpu0: HWP_REQ: min 5 max 62 des 0 epp 64 window 0x0 (0*10^0us) use_pkg 0",
		"cpu0: HWP_CAP: low 1 eff 5 guar 22 high 62",
		"cpu4: EPB 6",
		"cpu4: HWP_REQ: min 4 max 38 des 0 epp 64 window 0x0 (0*10^0us) use_pkg 0",
		"cpu4: HWP_CAP: low 1 eff 4 guar 12 high 38",
		"cpu12: EPB 6",
		"cpu12: HWP_REQ: min 4 max 21 des 0 epp 64 window 0x0 (0*10^0us) use_pkg 0",
		"cpu12: HWP_CAP: low 1 eff 4 guar 7 high 21",
		"cpu0: EPB 6",
		"cpu0: HWP_REQ: min 62 max 62 des 0 epp 0 window 0x0 (0*10^0us) use_pkg 0",
		"cpu0: HWP_CAP: low 1 eff 5 guar 22 high 62",
		"cpu0: EPB 15",
		"cpu0: HWP_REQ: min 5 max 22 des 0 epp 64 window 0x0 (0*10^0us) use_pkg 0",
		"cpu0: HWP_CAP: low 1 eff 5 guar 22 high 62",
	}
	if strings.Join(want, "\n") != strings.Join(lines, "\n") {
		t.Errorf("x86_energy_perf_policy printed:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

// modelFigures is what the model delivers over one emulated second from
// the current state of m (a fixed load, no limit binding): every CPU's
// APERF and MPERF counts, the package's and the cores' watts, and the
// emulated TSC rate.
type modelFigures struct {
	aperf, mperf []float64
	pkgW, corW   float64
	tscMHz       float64
}

func measureModel(t *testing.T, m *Machine, clk *fakeClock) modelFigures {
	t.Helper()
	n := m.NumCPUs()
	f := modelFigures{aperf: make([]float64, n), mperf: make([]float64, n), tscMHz: float64(m.Description().TSCMHz)}
	for c := range n {
		f.aperf[c], f.mperf[c] = -float64(msr(t, m, c, 0xe8)), -float64(msr(t, m, c, 0xe7))
	}
	p0, c0 := msr(t, m, 0, 0x611), msr(t, m, 0, 0x639)
	clk.add(time.Second)
	for c := range n {
		f.aperf[c] += float64(msr(t, m, c, 0xe8))
		f.mperf[c] += float64(msr(t, m, c, 0xe7))
	}
	f.pkgW = float64(uint32(msr(t, m, 0, 0x611)-p0)) * m.energyUnit()
	f.corW = float64(uint32(msr(t, m, 0, 0x639)-c0)) * m.energyUnit()
	return f
}

// mtlModel loads mtl-165u in process under busy and measures a second.
func mtlModel(t *testing.T, busy ConstLoad) modelFigures {
	t.Helper()
	clk := newClock()
	m, err := Load("mtl-165u", WithClock(clk.now), WithLoad(busy))
	if err != nil {
		t.Fatal(err)
	}
	clk.add(time.Second)
	return measureModel(t, m, clk)
}

// median returns the median of v (v is reordered).
func median(v []float64) float64 {
	slices.Sort(v)
	if n := len(v); n%2 == 0 {
		return (v[n/2-1] + v[n/2]) / 2
	}
	return v[len(v)/2]
}

// near reports whether got is within tol of want, relatively.
func near(got, want, tol float64) bool { return math.Abs(got/want-1) <= tol }

// Emulated time. Both tools divide some counts by their own clock's
// interval; on a loaded 2-CPU host the 14 CPUs, read one FUSE round trip
// after another, are read up to 150 ms off that clock, so those figures
// were seen 4% apart between the tools over 5 s (PkgWatt 22.3 against
// 21.55). The tests put them on the emulated machine's time instead,
// measured by a counter read next to the counted one: turbostat's row
// (APERF, MPERF and the host's TSC read together) over a second of
// emulated time is the row's interval x Busy% x TSC_MHz / 100 / (busy x
// 1700), MPERF counting busy x 1700 MHz; hwpprobe's is its interval x
// TSC_MHz / 1700, the emulated TSC counting 1700 MHz. A preemption
// between two reads still spoils single intervals, the two around it,
// one high and one low, so the median over several half-second intervals
// is compared, with the model's own figure computed in process.

// turbostatScale is the factor that puts a turbostat row's per-interval
// figures on emulated time, for CPUs busy the fraction busy of a machine
// whose TSC counts tscMHz.
func turbostatScale(t *testing.T, r tooltable.Row, busy, tscMHz float64) float64 {
	t.Helper()
	b, ok1 := r.Float("Busy%")
	tsc, ok2 := r.Float("TSC_MHz")
	if !ok1 || !ok2 || b <= 0 || tsc <= 0 {
		t.Fatalf("turbostat row %v: no Busy%% or TSC_MHz", r)
	}
	return busy * tscMHz * 100 / (b * tsc)
}

// watchScale is the same for a row of hwpprobe watch.
func watchScale(t *testing.T, r tooltable.Row, tscMHz float64) float64 {
	t.Helper()
	tsc, ok := r.Float("TSC_MHz")
	if !ok || tsc <= 0 {
		t.Fatalf("hwpprobe watch row %v: no TSC_MHz", r)
	}
	return tscMHz / tsc
}

// figure is one figure of a tool's row, or a failed test.
func figure(t *testing.T, r tooltable.Row, col string) float64 {
	t.Helper()
	v, ok := r.Float(col)
	if !ok {
		t.Fatalf("row %v: no %s", r, col)
	}
	return v
}

// TestTurbostatAgreesWithWatch: turbostat and `hwpprobe watch --per-cpu`
// sample mtl-165u, every CPU half busy (no limit binds in the few seconds
// this takes), at the same time, and each agrees within 1% with the
// model (issue #4): every CPU's Bzy_MHz (turbostat's base x dAPERF/dMPERF
// needs no clock; hwpprobe's TSC x APERF/MPERF is put on emulated time),
// package PkgWatt and CorWatt (on CPU 0's row), as medians over 8
// half-second intervals on emulated time (see above).
func TestTurbostatAgreesWithWatch(t *testing.T) {
	eachPeer(t, testTurbostatAgreesWithWatch)
}

func testTurbostatAgreesWithWatch(t *testing.T, e toolEnv) {
	const n, busy = 14, 0.5
	model := mtlModel(t, ConstLoad{busy})
	dir := t.TempDir()
	probe, err := testbin.Build(dir, "../../cmd/hwpprobe")
	if err != nil {
		t.Fatal(err)
	}
	ts, hp := filepath.Join(dir, "turbostat.out"), filepath.Join(dir, "watch.out")
	e.runBusy(t, "0.5", "mtl-165u", "sh", "-c",
		"turbostat --quiet --num_iterations 8 --interval 0.5 --show CPU,Busy%,Bzy_MHz,TSC_MHz,PkgWatt,CorWatt >"+ts+" 2>&1 & "+
			probe+" watch -i 500ms -n 8 --per-cpu --show Busy%,Bzy_MHz,TSC_MHz,PkgWatt,CorWatt >"+hp+" 2>&1; wait")
	for _, tool := range []struct {
		name  string
		path  string
		parse func(string) []tooltable.Table
		// scale puts row c's figures on emulated time; bzyScaled: whether
		// Bzy_MHz needs it; wattsCPU: the row whose scale the watts take.
		scale     func(r tooltable.Row) float64
		bzyScaled bool
		wattsCPU  int
	}{
		{"turbostat", ts, tooltable.Turbostat, func(r tooltable.Row) float64 { return turbostatScale(t, r, busy, model.tscMHz) }, false, 0},
		{"hwpprobe watch", hp, tooltable.Watch, func(r tooltable.Row) float64 { return watchScale(t, r, model.tscMHz) }, true, n - 1},
	} {
		out, err := os.ReadFile(tool.path)
		if err != nil {
			t.Fatal(err)
		}
		tbs := tool.parse(string(out))
		if len(tbs) < 6 {
			t.Fatalf("%s: %d samples, want 8\n%s", tool.name, len(tbs), out)
		}
		got := map[string][]float64{}
		for _, tb := range tbs {
			for c := range n {
				r := tb.CPU(c)
				bzy := figure(t, r, "Bzy_MHz")
				if tool.bzyScaled {
					bzy *= tool.scale(r)
				}
				got[fmt.Sprintf("cpu%d Bzy_MHz", c)] = append(got[fmt.Sprintf("cpu%d Bzy_MHz", c)], bzy)
			}
			k := tool.scale(tb.CPU(tool.wattsCPU))
			got["PkgWatt"] = append(got["PkgWatt"], figure(t, tb.CPU(0), "PkgWatt")*k)
			got["CorWatt"] = append(got["CorWatt"], figure(t, tb.CPU(0), "CorWatt")*k)
		}
		want := map[string]float64{"PkgWatt": model.pkgW, "CorWatt": model.corW}
		for c := range n {
			want[fmt.Sprintf("cpu%d Bzy_MHz", c)] = model.tscMHz * model.aperf[c] / model.mperf[c]
		}
		for name, w := range want {
			if g := median(got[name]); !near(g, w, 0.01) {
				t.Errorf("%s %s: %.2f (median of %v on emulated time), model %.2f: want within 1%%\n%s", tool.name, name, g, got[name], w, out)
			}
		}
	}
}

// TestTurbostatSummaryIdleCPUs: on a machine where some CPUs are busy and
// the others idle (MPERF does not advance), hwpprobe watch's machine row
// has the model's Avg_MHz and Bzy_MHz, as turbostat's summary row does,
// within 1%: turbostat sums every CPU's APERF, MPERF and TSC and divides
// by all of them, idle ones included (sum_counters(), compute_average()),
// and so must hwpprobe. CPUs 1, 3, 5, 7, 9, 11 and both LP E-cores are
// idle; the model's machine figures are, per emulated second, Avg_MHz =
// sum of APERF / 14 and Bzy_MHz = 1700 x sum of APERF / sum of MPERF.
//
// turbostat itself cannot run on a CPU whose MPERF did not advance at all
// (delta_thread() returns -1 and it re-initializes for ever), so it
// samples the same load with those CPUs busy one millionth of the time,
// whose figures differ from the fully idle ones by far less than 1%.
// Figures are medians over 6 half-second intervals on emulated time (see
// above); turbostat's Avg_MHz takes its row's Busy% x TSC_MHz, which
// sums the CPUs' MPERF, with the model's mean busy fraction. hwpprobe's
// TSC_MHz itself, a figure of its own clock, is checked within 20%: the
// bug this test guards against (idle CPUs' TSC in the sum, not in the
// divisor) gave 2.5x.
func TestTurbostatSummaryIdleCPUs(t *testing.T) {
	eachPeer(t, testTurbostatSummaryIdleCPUs)
}

func testTurbostatSummaryIdleCPUs(t *testing.T, e toolEnv) {
	const load = "1,%[1]s,1,%[1]s,0.5,%[1]s,0.7,%[1]s,1,%[1]s,0.3,%[1]s,%[1]s,%[1]s"
	busy := func(idle float64) (ConstLoad, float64) {
		b := ConstLoad{1, idle, 1, idle, 0.5, idle, 0.7, idle, 1, idle, 0.3, idle, idle, idle}
		sum := 0.0
		for _, x := range b {
			sum += x
		}
		return b, sum / float64(len(b))
	}
	dir := t.TempDir()
	probe, err := testbin.Build(dir, "../../cmd/hwpprobe")
	if err != nil {
		t.Fatal(err)
	}
	tsOut := e.runBusy(t, fmt.Sprintf(load, "1e-6"), "mtl-165u",
		"turbostat", "--quiet", "--num_iterations", "6", "--interval", "0.5", "--show", "CPU,Avg_MHz,Busy%,Bzy_MHz,TSC_MHz")
	hpOut := e.runBusy(t, fmt.Sprintf(load, "0"), "mtl-165u", probe, "watch", "-i", "500ms", "-n", "6", "--show", "Avg_MHz,Bzy_MHz,TSC_MHz")
	tsLoad, tsMean := busy(1e-6)
	hpLoad, _ := busy(0)
	tsModel, hpModel := mtlModel(t, tsLoad), mtlModel(t, hpLoad)
	for _, tool := range []struct {
		name  string
		out   string
		model modelFigures
		tbs   []tooltable.Table
		row   map[string]string
		// avgScale and bzyScale put the row's figures on emulated time.
		avgScale, bzyScale func(r tooltable.Row) float64
	}{
		{"turbostat", tsOut, tsModel, tooltable.Turbostat(tsOut), map[string]string{"CPU": "-"},
			func(r tooltable.Row) float64 { return turbostatScale(t, r, tsMean, tsModel.tscMHz) }, func(tooltable.Row) float64 { return 1 }},
		{"hwpprobe watch", hpOut, hpModel, tooltable.Watch(hpOut), map[string]string{"Type": "-"},
			func(r tooltable.Row) float64 { return watchScale(t, r, hpModel.tscMHz) },
			func(r tooltable.Row) float64 { return watchScale(t, r, hpModel.tscMHz) }},
	} {
		if len(tool.tbs) < 5 {
			t.Fatalf("%s: %d samples, want 6\n%s", tool.name, len(tool.tbs), tool.out)
		}
		var avg, bzy []float64
		for _, tb := range tool.tbs {
			r := tb.Find(tool.row)
			avg = append(avg, figure(t, r, "Avg_MHz")*tool.avgScale(r))
			bzy = append(bzy, figure(t, r, "Bzy_MHz")*tool.bzyScale(r))
			if tool.name == "hwpprobe watch" {
				if tsc := figure(t, r, "TSC_MHz"); !near(tsc, tool.model.tscMHz, 0.2) {
					t.Errorf("hwpprobe watch TSC_MHz %v, want %v within 20%%\n%s", tsc, tool.model.tscMHz, tool.out)
				}
			}
		}
		sa, sm := 0.0, 0.0
		for c := range tool.model.aperf {
			sa += tool.model.aperf[c]
			sm += tool.model.mperf[c]
		}
		for _, c := range []struct {
			name string
			got  []float64
			want float64
		}{{"Avg_MHz", avg, sa / 1e6 / float64(len(tool.model.aperf))}, {"Bzy_MHz", bzy, tool.model.tscMHz * sa / sm}} {
			if g := median(c.got); !near(g, c.want, 0.01) {
				t.Errorf("%s %s: %.1f (median of %.1f on emulated time), model %.1f: want within 1%%\n%s", tool.name, c.name, g, c.got, c.want, tool.out)
			}
		}
	}
}
