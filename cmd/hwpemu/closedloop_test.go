// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// boostShares makes the closed loop's group (named in hwpemu_loop) weigh
// as much as the host allows (v1 cpu.shares 262144, v2 cpu.weight 10000),
// so that other work on this shared host does not take the CPU time the
// quota grants: the tests measure the quota, not the host's load. The
// group, and its weight with it, goes when hwpemu ends.
const boostShares = `g=$(sed -n 's/.*cgroup=v[12]:\([^, ]*\).*/\1/p' /sys/devices/system/cpu/hwpemu_loop)
if [ -e "$g/cpu.shares" ]; then echo 262144 > "$g/cpu.shares"; else echo 10000 > "$g/cpu.weight"; fi
`

// TestClosedLoopSlows runs the same CPU-bound work (hwpprobe workload
// burn, one busy thread) under `hwpemu run mtl-165u` with every CPU's
// scaling_max_freq at 400 MHz, then at 4.9 GHz, on this host's real cpu
// controller. The work lands on CPU 0, a P-core: at 400 MHz the model
// delivers 400 MHz, at 4.9 GHz (EPP 64, full load) 3840 MHz, so the
// closed loop's quotas are 400/4960 and 3840/4960 of a host CPU and the
// slow run should take 9.6 times as long; the test asks for 3 times
// (the loop lags an interval at each change, and the host's own load
// still takes some time).
func TestClosedLoopSlows(t *testing.T) {
	script := boostShares + `setmax() { for f in /sys/devices/system/cpu/cpu*/cpufreq/scaling_max_freq; do echo $1 > $f; done; sleep 0.3; }
run() { t0=$(date +%s%N); hwpprobe workload burn 600; t1=$(date +%s%N); echo $1=$((t1-t0)); }
setmax 400000; run low
setmax 4900000; run high
`
	kv := keyValues(inMachine(t, "mtl-165u", script))
	low, err1 := strconv.ParseFloat(kv["low"], 64)
	high, err2 := strconv.ParseFloat(kv["high"], 64)
	if err1 != nil || err2 != nil || high <= 0 {
		t.Fatalf("times: %v", kv)
	}
	t.Logf("400 MHz: %.0f ms, 4.9 GHz: %.0f ms, ratio %.2f (the model: 9.6)", low/1e6, high/1e6, low/high)
	if low/high < 3 {
		t.Errorf("the work at 400 MHz took %.2f times as long as at 4.9 GHz, want at least 3 (9.6 in the model)", low/high)
	}
}

// TestClosedLoopBusy runs two busy shell loops under `hwpemu run
// mtl-165u` and reads the emulated /proc/stat over a second: the loops
// make CPUs 0 and 1 busy (with the group's weight raised, each gets the
// CPU time its emulated CPU delivers: busy near 1) and the other twelve
// idle, whatever else the host runs (in the open loop every emulated CPU follows a host CPU, so
// the host's other work shows on all fourteen).
func TestClosedLoopBusy(t *testing.T) {
	script := boostShares + `sh -c 'while :; do :; done' & a=$!
sh -c 'while :; do :; done' & b=$!
sleep 0.5
s1=$(grep '^cpu[0-9]' /proc/stat); sleep 1; s2=$(grep '^cpu[0-9]' /proc/stat)
kill $a $b
echo "$s1"; echo "$s2"
`
	out := inMachine(t, "mtl-165u", script)
	busy := statBusy(t, out, 14)
	t.Logf("emulated busy: %.3f", busy)
	// The script's own shell, sleep and grep are the only other work: a
	// few percent of a CPU placed after the loops, on CPU 2.
	rest := 0.0
	for c, b := range busy {
		switch {
		case c < 2 && b < 0.3:
			t.Errorf("CPU %d busy %.3f, want a busy loop's (at least 0.3)", c, b)
		case c >= 2 && b > 0.1:
			t.Errorf("CPU %d busy %.3f, want idle (two busy processes are on CPUs 0 and 1)", c, b)
		case c >= 2:
			rest += b
		}
	}
	if rest > 0.15 {
		t.Errorf("CPUs 2-13 busy %.3f together, want about 0: two busy processes make about 2 busy CPUs", rest)
	}
}

// statBusy parses two sets of n cpuN lines of /proc/stat and returns each
// CPU's busy fraction between them: (total - idle - iowait) / total.
func statBusy(t *testing.T, out string, n int) []float64 {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2*n {
		t.Fatalf("want %d cpuN lines, got:\n%s", 2*n, out)
	}
	ticks := func(l string) (busy, total float64) {
		for i, f := range strings.Fields(l)[1:] {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				t.Fatalf("%q: %v", l, err)
			}
			total += v
			if i != 3 && i != 4 {
				busy += v
			}
		}
		return busy, total
	}
	out2 := make([]float64, n)
	for c := range n {
		b1, t1 := ticks(lines[c])
		b2, t2 := ticks(lines[n+c])
		if t2 > t1 {
			out2[c] = (b2 - b1) / (t2 - t1)
		}
	}
	return out2
}

// TestLoopReported: the banner and sys/devices/system/cpu/hwpemu_loop say
// whether CMD runs in the closed loop, and why not.
func TestLoopReported(t *testing.T) {
	for _, tc := range []struct {
		name         string
		flags        []string
		machine      string
		file, banner string
	}{
		{"closed by default", nil, "mtl-165u", "closed cgroup=v", "hwpemu: closed loop: CMD's CPU time follows"},
		{"--closed-loop", []string{"--closed-loop"}, "mtl-165u", "closed cgroup=v", "hwpemu: closed loop: CMD's CPU time follows"},
		{"--open-loop", []string{"--open-loop"}, "mtl-165u", "open reason=--open-loop", "hwpemu: open loop (--open-loop)"},
		{"--open-loop wins", []string{"--closed-loop", "--open-loop"}, "mtl-165u", "open reason=--open-loop", "hwpemu: open loop (--open-loop)"},
		{"--busy", []string{"--busy", "0.5"}, "zen4-amd-pstate", "open reason=--busy fixes the emulated load", "hwpemu: open loop (--busy"},
		{"no frequency model", nil, "vm-bare", "open reason=vm-bare models no delivered frequency", "hwpemu: open loop (vm-bare"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"run"}, tc.flags...), tc.machine, "--", "cat", "/sys/devices/system/cpu/hwpemu_loop")
			out, errOut, code := runEmu(t, args...)
			if code != 0 || !strings.HasPrefix(out, tc.file) || !strings.Contains(errOut, tc.banner) {
				t.Errorf("exit %d, hwpemu_loop %q (want prefix %q), stderr %q (want %q)", code, out, tc.file, errOut, tc.banner)
			}
		})
	}
}

// TestClosedLoopBadInput: a host without a usable cpu controller (its
// mount removed in a private mount namespace) and one where no group can
// be made (the controller read-only) are bad input for the closed loop:
// one line suggesting --open-loop, exit 2, whether or not --closed-loop
// is given; --open-loop then runs.
func TestClosedLoopBadInput(t *testing.T) {
	h := filepath.Join(binDir, "hwpemu")
	for _, tc := range []struct{ name, prep, want string }{
		{"no cpu controller", "umount -l /sys/fs/cgroup/cpu", "hwpemu: closed loop: no usable cpu controller: "},
		{"read-only controller", "mount -o remount,bind,ro /sys/fs/cgroup/cpu", "hwpemu: closed loop: no permission to create a cgroup: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, flag := range []string{"", "--closed-loop", "--open-loop"} {
				open := flag == "--open-loop"
				run := h + " run " + flag + " mtl-165u -- true"
				cmd := exec.Command("unshare", "-m", "sh", "-c", tc.prep+" && exec "+run)
				b, err := cmd.CombinedOutput()
				code := exitCode(err)
				lines := strings.Split(strings.TrimSpace(string(b)), "\n")
				if open {
					if code != 0 {
						t.Errorf("--open-loop: exit %d: %s", code, b)
					}
					continue
				}
				if code != exitUsage || len(lines) != 1 || !strings.HasPrefix(lines[0], tc.want) || !strings.HasSuffix(lines[0], "; run with --open-loop") {
					t.Errorf("%s: exit %d, output %q; want exit 2 and one line %q...; run with --open-loop", run, code, b, tc.want)
				}
			}
		})
	}
}
