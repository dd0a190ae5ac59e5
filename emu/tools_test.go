package emu

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/testbin"
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
	bin, err := testbin.Build(t.TempDir(), "../cmd/hwpemu")
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

// TestTurbostatAgreesWithWatch: turbostat and `hwpprobe watch` sample the
// same emulated counters at the same time, and their TSC-free figures
// agree within 1% (issue #4): the machine's Bzy_MHz (base x APERF/MPERF;
// turbostat takes the base from CPUID 0x16, hwpprobe from
// MSR_PLATFORM_INFO), PkgWatt and CorWatt (RAPL energy over the
// interval). The load is fixed (--busy), so the two tools' intervals,
// which start a few milliseconds apart, see the same power.
func TestTurbostatAgreesWithWatch(t *testing.T) {
	eachPeer(t, testTurbostatAgreesWithWatch)
}

func testTurbostatAgreesWithWatch(t *testing.T, e toolEnv) {
	dir := t.TempDir()
	probe, err := testbin.Build(dir, "../cmd/hwpprobe")
	if err != nil {
		t.Fatal(err)
	}
	ts, hp := filepath.Join(dir, "turbostat.out"), filepath.Join(dir, "watch.out")
	// 5 s intervals: each tool reads the 14 CPUs' counters one FUSE round
	// trip after another and times the pass once, so a loaded machine
	// shifts a reading by tens of ms; over 2 s that was 1-5% (turbostat's
	// PkgWatt 19.6-23.3 W against a steady 21.6 W); over 5 s the same
	// shift weighs 2.5 times less.
	e.run(t, "mtl-165u", "sh", "-c",
		"turbostat --quiet --num_iterations 1 --interval 5 --show CPU,Bzy_MHz,PkgWatt,CorWatt >"+ts+" 2>&1 & "+
			probe+" watch -i 5s -n 1 --show Bzy_MHz,PkgWatt,CorWatt >"+hp+" 2>&1; wait")
	tsOut, err := os.ReadFile(ts)
	if err != nil {
		t.Fatal(err)
	}
	hpOut, err := os.ReadFile(hp)
	if err != nil {
		t.Fatal(err)
	}
	// turbostat: the summary row "-" has the machine's Bzy_MHz; package 0's
	// watts print on its first CPU's row, "0".
	tsSum := regexp.MustCompile(`(?m)^-\t(\d+)\t`).FindStringSubmatch(string(tsOut))
	tsPkg := regexp.MustCompile(`(?m)^0\t\d+\t([\d.]+)\t([\d.]+)$`).FindStringSubmatch(string(tsOut))
	// hwpprobe: the machine row has "-" in Type, Package, Core and CPU.
	hpSum := regexp.MustCompile(`(?m)^\s+-\s+-\s+-\s+-\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s*$`).FindStringSubmatch(string(hpOut))
	if tsSum == nil || tsPkg == nil || hpSum == nil {
		t.Fatalf("unparsed output\nturbostat:\n%s\nhwpprobe watch:\n%s", tsOut, hpOut)
	}
	for _, c := range []struct {
		name      string
		turbostat string
		hwpprobe  string
	}{
		{"Bzy_MHz", tsSum[1], hpSum[1]},
		{"PkgWatt", tsPkg[1], hpSum[2]},
		{"CorWatt", tsPkg[2], hpSum[3]},
	} {
		a, _ := strconv.ParseFloat(c.turbostat, 64)
		b, _ := strconv.ParseFloat(c.hwpprobe, 64)
		if a <= 0 || b < a*0.99 || b > a*1.01 {
			t.Errorf("%s: turbostat %v, hwpprobe %v: want within 1%%\nturbostat:\n%s\nhwpprobe watch:\n%s", c.name, a, b, tsOut, hpOut)
		}
	}
}

// TestTurbostatSummaryIdleCPUs: on a machine where some CPUs are busy and
// the others idle (MPERF does not advance), hwpprobe watch's machine row
// has turbostat's summary Avg_MHz and Bzy_MHz within 1%, and its TSC_MHz
// is the machine's TSC rate: turbostat sums every CPU's APERF, MPERF and
// TSC and divides by all of them, idle ones included (sum_counters(),
// compute_average()). CPUs 1, 3, 5, 7, 9, 11 and both LP E-cores are
// idle.
//
// turbostat itself cannot run on a CPU whose MPERF did not advance at all
// (delta_thread() returns -1 and it re-initializes for ever), so it
// samples the same load with those CPUs busy one millionth of the time,
// whose figures differ from the fully idle ones by far less than 1%.
// turbostat's TSC_MHz is the host's (it reads the TSC with RDTSC, which
// the emulator does not answer), so hwpprobe's is checked against the
// machine's description.
func TestTurbostatSummaryIdleCPUs(t *testing.T) {
	eachPeer(t, testTurbostatSummaryIdleCPUs)
}

func testTurbostatSummaryIdleCPUs(t *testing.T, e toolEnv) {
	const load = "1,%[1]s,1,%[1]s,0.5,%[1]s,0.7,%[1]s,1,%[1]s,0.3,%[1]s,%[1]s,%[1]s"
	dir := t.TempDir()
	probe, err := testbin.Build(dir, "../cmd/hwpprobe")
	if err != nil {
		t.Fatal(err)
	}
	tsOut := e.runBusy(t, fmt.Sprintf(load, "1e-6"), "mtl-165u",
		"turbostat", "--quiet", "--num_iterations", "1", "--interval", "1", "--show", "CPU,Avg_MHz,Bzy_MHz")
	hpOut := e.runBusy(t, fmt.Sprintf(load, "0"), "mtl-165u", probe, "watch", "-i", "1s", "-n", "1", "--show", "Avg_MHz,Bzy_MHz,TSC_MHz")
	tsSum := regexp.MustCompile(`(?m)^-\t(\d+)\t(\d+)$`).FindStringSubmatch(tsOut)
	hpSum := regexp.MustCompile(`(?m)^\s+-\s+-\s+-\s+-\s+(\d+)\s+(\d+)\s+(\d+)\s*$`).FindStringSubmatch(hpOut)
	if tsSum == nil || hpSum == nil {
		t.Fatalf("unparsed output\nturbostat:\n%s\nhwpprobe watch:\n%s", tsOut, hpOut)
	}
	m, err := Load("mtl-165u")
	if err != nil {
		t.Fatal(err)
	}
	num := func(s string) float64 {
		v, _ := strconv.ParseFloat(s, 64)
		return v
	}
	// hwpprobe's interval comes from its own clock, read once after every
	// CPU's counters; on a loaded machine that clock and the emulated
	// counters drift apart by a few percent. Its TSC_MHz carries the same
	// error, and so do Avg_MHz and Bzy_MHz (Bzy_MHz is TSC_MHz x
	// dAPERF/dMPERF), so both are compared at the emulated TSC rate:
	// X x TSC rate / TSC_MHz depends on the emulated counters alone.
	// TSC_MHz itself is checked within 20%: the bug this test guards
	// against (idle CPUs' TSC in the sum, not in the divisor) gave 2.5x,
	// while on a 2-CPU host under load one pass over the 14 CPUs was
	// seen to read them up to 150 ms apart (TSC_MHz 1852 for 1700 over
	// 1 s).
	tsc := float64(m.Description().TSCMHz)
	hpTSC := num(hpSum[3])
	if hpTSC <= 0 {
		t.Fatalf("hwpprobe TSC_MHz %q\nhwpprobe watch:\n%s", hpSum[3], hpOut)
	}
	for _, c := range []struct {
		name     string
		want, hp float64
		tol      float64
	}{
		{"Avg_MHz", num(tsSum[1]), num(hpSum[1]) * tsc / hpTSC, 0.01},
		{"Bzy_MHz", num(tsSum[2]), num(hpSum[2]) * tsc / hpTSC, 0.01},
		{"TSC_MHz", tsc, hpTSC, 0.2},
	} {
		a, b := c.want, c.hp
		if a <= 0 || b < a*(1-c.tol) || b > a*(1+c.tol) {
			t.Errorf("%s: want %v, hwpprobe %.0f: want within %.0f%%\nturbostat:\n%s\nhwpprobe watch:\n%s", c.name, a, b, c.tol*100, tsOut, hpOut)
		}
	}
}
