// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/hostvariant"
)

// hostPMU is what the perf PMUs of the machine the test runs on offer
// watch, read from /sys/bus/event_source/devices (Intel and AMD hosts,
// their VMs, differ: this Intel VM has the power PMU's energy-psys only).
type hostPMU struct {
	aperfMPERF bool     // msr PMU aperf and mperf: Avg_MHz, Busy%, Bzy_MHz
	tsc        bool     // msr PMU tsc: TSC_MHz
	cpuPMU     bool     // a hardware PMU (cpu/instructions/): IPC
	energy     []string // the power PMU's energy columns, PkgWatt...SysWatt
}

func readHostPMU(t *testing.T) hostPMU {
	t.Helper()
	const dir = "/sys/bus/event_source/devices/"
	exists := func(p string) bool { _, err := os.Stat(dir + p); return err == nil }
	h := hostPMU{aperfMPERF: exists("msr/events/aperf") && exists("msr/events/mperf"), tsc: exists("msr/events/tsc"), cpuPMU: exists("cpu")}
	// The power PMU's events, in watch's column order (sampler.DomainColumns).
	for i, ev := range []string{"energy-pkg", "energy-cores", "energy-gpu", "energy-ram", "energy-psys"} {
		if exists("power/events/" + ev) {
			h.energy = append(h.energy, []string{"PkgWatt", "CorWatt", "GFXWatt", "RAMWatt", "SysWatt"}[i])
		}
	}
	t.Logf("host PMUs: %+v", h)
	return h
}

// watchHeader is the column header line: "  Package  Core  CPU ...".
var watchHeader = regexp.MustCompile(`^\s+Package\s+Core\s+CPU(\s|$)`)

// TestWatchRealVM runs watch on the machine the test runs on (a VM in
// CI, without the msr driver or cpufreq), under every host variant: the
// perf msr PMU gives the TSC where it is there,
// the other figures are there as the host's PMUs say (readHostPMU), and
// watch says why each missing one is missing instead of printing zeros.
// Piped output appends and has no escape sequences.
func TestWatchRealVM(t *testing.T) {
	hostvariant.Each(t, func(t *testing.T, _ hostvariant.Variant) { watchRealVM(t) })
}

func watchRealVM(t *testing.T) {
	pmu := readHostPMU(t)
	out, stderr, code := runBin(t, "watch", "-i", "100ms", "-n", "2")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("piped output contains ANSI escapes:\n%q", out)
	}
	notes := map[string]bool{
		"# Avg_MHz: no APERF/MPERF: the perf msr PMU has no aperf/mperf event": !pmu.aperfMPERF && pmu.tsc,
		"# Avg_MHz: no APERF/MPERF/TSC: perf msr PMU":                          !pmu.tsc,
		"# PkgWatt: no energy counters":                                        len(pmu.energy) == 0,
	}
	if !pmu.cpuPMU {
		notes["# IPC: .*cpu/instructions/"] = true
	}
	for note, want := range notes {
		if regexp.MustCompile(`(?m)^`+note).MatchString(out) != want {
			t.Errorf("output has %q: %v, want %v:\n%s", note, !want, want, out)
		}
	}
	var header []string
	var rows [][]string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "#"):
		case watchHeader.MatchString(l):
			header = append(header, l)
		default:
			rows = append(rows, strings.Fields(l))
		}
	}
	// Non-hybrid, no --per-cpu: the header once, one summary row a sample.
	if len(header) != 1 {
		t.Fatalf("headers %q, want one:\n%s", header, out)
	}
	cols := strings.Fields(header[0])
	var energy []string
	for _, c := range cols {
		if strings.HasSuffix(c, "Watt") {
			energy = append(energy, c)
		}
	}
	if !slices.Equal(energy, pmu.energy) || slices.Contains(cols, "Avg_MHz") != pmu.aperfMPERF {
		t.Errorf("header %q: want energy columns %q and Avg_MHz %v", cols, pmu.energy, pmu.aperfMPERF)
	}
	tsc := slices.Index(cols, "TSC_MHz")
	if (tsc >= 0) != pmu.tsc || len(rows) != 2 {
		t.Fatalf("header %q, rows %q: want TSC_MHz %v and 2 rows", cols, rows, pmu.tsc)
	}
	for _, r := range rows {
		if len(r) != len(cols) || !slices.Equal(r[:3], []string{"-", "-", "-"}) || (tsc >= 0 && !regexp.MustCompile(`^\d{4,}$`).MatchString(r[tsc])) {
			t.Errorf("row %q: want a value per column of %q, the machine's \"-\" and a TSC_MHz of 4 digits or more", r, cols)
		}
	}
}

func TestWatchUsage(t *testing.T) {
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{"watch", "--show", "Avg_MHz,Bogus"}, `unknown column "Bogus"`},
		{[]string{"watch", "-i", "1ms"}, "too short"},
		{[]string{"watch", "-i", "soon"}, "invalid argument"},
		{[]string{"watch", "-C", "4095"}, "does not exist"},
		{[]string{"watch", "-C", "1-0"}, "runs backwards"},
		{[]string{"watch", "-n", "-1"}, "negative"},
		{[]string{"watch", "extra"}, "unknown command"},
	}
	for _, tt := range tests {
		out, stderr, code := runBin(t, tt.args...)
		if code != 2 || !strings.Contains(stderr, tt.msg) || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", tt.args, code, out, stderr, tt.msg)
		}
		if n := strings.Count(strings.TrimSpace(stderr), "\n"); n != 0 {
			t.Errorf("%v: error is %d lines, want one: %q", tt.args, n+1, stderr)
		}
	}
}

// TestWatchEmulated runs watch under the emulated Meteor Lake laptop
// (hwpemu run mounts its devices and sysfs in a private mount namespace):
// the output says it is emulated, has the three core types, and shows
// intel_pstate's EPP change when the preference is written mid-watch (EPP
// 64 = balance_performance, 16 = performance on model 0xAA; docs/kernel-facts.md
// section 1), marked "!" on the sample that saw it.
func TestWatchEmulated(t *testing.T) {
	dir := t.TempDir()
	outFile := filepath.Join(dir, "watch.out")
	// Write the EPP once watch has printed its first sample, so that the
	// change falls between two of its readings however slow the machine.
	script := hwpprobeBin + ` watch -i 300ms -n 4 --per-cpu --show Busy%,Bzy_MHz,EPP,PkgWatt > ` + outFile + ` &
for i in $(seq 200); do grep -q '^ *P  *0  *0  *0 ' ` + outFile + ` && break; sleep 0.05; done
echo performance > /sys/devices/system/cpu/cpufreq/policy0/energy_performance_preference
wait`
	runEmu(t, 2*time.Minute, "run", "mtl-165u", "--", "sh", "-c", script)
	b, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	if !strings.Contains(out, `# EMULATED machine "mtl-165u"`) {
		t.Errorf("output does not say it is emulated:\n%s", out)
	}
	for _, typ := range []string{"P", "E", "LP-E"} {
		if !regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(typ) + `\s+-\s+-\s+-\s`).MatchString(out) {
			t.Errorf("no %s summary row:\n%s", typ, out)
		}
	}
	cpu0 := regexp.MustCompile(`(?m)^\s+P\s+0\s+0\s+0\s+\S+\s+\S+\s+(\S+)\s+\S+$`)
	var epp []string
	for _, m := range cpu0.FindAllStringSubmatch(out, -1) {
		epp = append(epp, m[1])
	}
	if len(epp) != 4 || epp[0] != "64" || epp[3] != "16" {
		t.Fatalf("cpu0 EPP per sample %q, want 4 samples from 64 to 16:\n%s", epp, out)
	}
	changed := 0
	for _, e := range epp {
		if e == "16!" {
			changed++
		}
	}
	if changed != 1 {
		t.Errorf("cpu0 EPP per sample %q: want exactly one \"16!\"", epp)
	}
}

// TestWatchTerminal runs watch on a pseudo-terminal (util-linux script):
// each sample clears the screen and redraws the notes, header and rows in
// place instead of appending.
func TestWatchTerminal(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "script", "-qec", hwpprobeBin+" watch -i 100ms -n 3", "/dev/null").Output()
	if err != nil {
		t.Fatalf("script: %v\n%s", err, out)
	}
	s := string(out)
	if n := strings.Count(s, "\x1b[H\x1b[2J"); n != 3 {
		t.Errorf("%d screen clears for 3 samples, want 3:\n%q", n, s)
	}
	if n := strings.Count(s, "TSC_MHz"); n != 3 {
		t.Errorf("%d headers for 3 samples, want one per redraw:\n%q", n, s)
	}
}

// TestWatchEnergyWrap starts the emulated machine's 32-bit RAPL counters
// 0.5 J before they wrap (2^32 x 2^-14 J = 262144 J; powercap's
// energy_uj wraps with them at max_energy_range_uj): every PkgWatt stays
// a plausible laptop figure (the idle floor of the model is 0.8 W, the
// part's PL2 57 W) instead of a negative or huge one. At 0.8-25 W the wrap
// comes 0.02-0.6 s after the emulator starts, in watch's start-up or its
// first intervals; the test checks that it did happen by the end.
// source/emu_test.go checks a wrap inside an interval deterministically.
func TestWatchEnergyWrap(t *testing.T) {
	emuBin := hwpemuBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, emuBin, "run", "--energy-start", "262143.5", "mtl-165u", "--", "sh", "-c",
		hwpprobeBin+" watch -i 300ms -n 4 --show PkgWatt,CorWatt && cat /sys/class/powercap/intel-rapl:0/energy_uj").Output()
	if err != nil {
		t.Fatalf("hwpemu run: %v\n%s", err, out)
	}
	lines := strings.Fields(string(out))
	var uj float64
	if _, err := fmt.Sscan(lines[len(lines)-1], &uj); err != nil || uj > 100e6 {
		t.Fatalf("energy_uj at the end %q (%v): the counter did not wrap", lines[len(lines)-1], err)
	}
	row := regexp.MustCompile(`(?m)^\s+-\s+-\s+-\s+-\s+(\S+)\s+(\S+)$`)
	rows := row.FindAllStringSubmatch(string(out), -1)
	if len(rows) != 4 {
		t.Fatalf("%d machine rows, want 4:\n%s", len(rows), out)
	}
	for _, r := range rows {
		var pkg, cor float64
		if _, err := fmt.Sscan(r[1], &pkg); err != nil {
			t.Fatalf("PkgWatt %q: %v", r[1], err)
		}
		// An idle interval leaves the cores' counter where it was:
		// "(zero)", which is not a measurement of 0 W but is below PkgWatt.
		if _, err := fmt.Sscan(r[2], &cor); err != nil && r[2] != "(zero)" {
			t.Fatalf("CorWatt %q: %v", r[2], err)
		}
		// The floor less 5%: the interval is timed by watch's clock, the
		// energy counted by the emulator's (a loaded host gave 0.79).
		if pkg < 0.76 || pkg > 57 || cor < 0 || cor > pkg {
			t.Errorf("PkgWatt %v CorWatt %v across the wrap: want 0.76 <= PkgWatt <= 57, 0 <= CorWatt <= PkgWatt\n%s", pkg, cor, out)
		}
	}
}
