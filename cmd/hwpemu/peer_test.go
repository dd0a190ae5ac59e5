// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/testbin"
)

// peerDecode is one CPU's registers as x86_energy_perf_policy prints them
// (tools/power/x86/x86_energy_perf_policy/x86_energy_perf_policy.c:
// print_hwp_request(), print_hwp_cap(), and "cpu%d: EPB %u").
type peerDecode struct {
	EPB                              int
	ReqMin, ReqMax, ReqDes, ReqEPP   int
	ReqWindow, ReqUsePkg             int
	CapLow, CapEff, CapGuar, CapHigh int
}

var (
	peerEPB = regexp.MustCompile(`^cpu(\d+): EPB (\d+)$`)
	peerReq = regexp.MustCompile(`^cpu(\d+): HWP_REQ: min (\d+) max (\d+) des (\d+) epp (\d+) window 0x([0-9a-f]+) \(\d+\*10\^\d+us\) use_pkg (\d+)$`)
	peerCap = regexp.MustCompile(`^cpu(\d+): HWP_CAP: low (\d+) eff (\d+) guar (\d+) high (\d+)$`)
)

func parsePeer(t *testing.T, out string) map[int]*peerDecode {
	t.Helper()
	m := map[int]*peerDecode{}
	at := func(s string) *peerDecode {
		n, _ := strconv.Atoi(s)
		if m[n] == nil {
			m[n] = &peerDecode{}
		}
		return m[n]
	}
	ints := func(ss []string, base int) []int {
		var v []int
		for _, s := range ss {
			n, err := strconv.ParseInt(s, base, 64)
			if err != nil {
				t.Fatalf("x86_energy_perf_policy field %q: %v", s, err)
			}
			v = append(v, int(n))
		}
		return v
	}
	for _, l := range strings.Split(out, "\n") {
		if g := peerEPB.FindStringSubmatch(l); g != nil {
			at(g[1]).EPB = ints(g[2:3], 10)[0]
		} else if g := peerReq.FindStringSubmatch(l); g != nil {
			d, v := at(g[1]), ints(g[2:6], 10)
			d.ReqMin, d.ReqMax, d.ReqDes, d.ReqEPP = v[0], v[1], v[2], v[3]
			d.ReqWindow = ints(g[6:7], 16)[0]
			d.ReqUsePkg = ints(g[7:8], 10)[0]
		} else if g := peerCap.FindStringSubmatch(l); g != nil {
			d, v := at(g[1]), ints(g[2:6], 10)
			d.CapLow, d.CapEff, d.CapGuar, d.CapHigh = v[0], v[1], v[2], v[3]
		}
	}
	return m
}

// snapDecode is the same decode from `hwpprobe snapshot --json`; the window
// and package-control bits are taken from the raw HWP_REQUEST (bits 41:32
// and 42, SDM) since the JSON gives the window in µs.
func snapDecode(t *testing.T, s snapshot) map[int]*peerDecode {
	t.Helper()
	m := map[int]*peerDecode{}
	for cpu, c := range s.cpus() {
		r, hc, epb := c.Registers.HWPRequest, c.Registers.HWPCap, c.Registers.EPB
		if r == nil || hc == nil || epb == nil {
			t.Fatalf("cpu%d: snapshot lacks HWP or EPB registers: %+v", cpu, c.Registers)
		}
		raw, err := strconv.ParseUint(r.Raw, 0, 64)
		if err != nil {
			t.Fatal(err)
		}
		m[cpu] = &peerDecode{
			EPB:    epb.Value,
			ReqMin: r.Min, ReqMax: r.Max, ReqDes: r.Desired, ReqEPP: r.EPP,
			ReqWindow: int(raw>>32) & 0x3ff, ReqUsePkg: int(raw>>42) & 1,
			CapLow: hc.Lowest, CapEff: hc.MostEfficient, CapGuar: hc.Guaranteed, CapHigh: hc.Highest,
		}
	}
	return m
}

// TestPeerX86EnergyPerfPolicy is the peer check of issue #3: the kernel's
// own x86_energy_perf_policy (Debian linux-cpupower), run inside
// `hwpemu run mtl-165u` with the project's cpuid shim (it gates on CPUID
// leaf 6, which this VM reports without HWP), must decode every emulated
// CPU's HWP_REQUEST, HWP_CAPABILITIES and EPB exactly as
// `hwpprobe snapshot --json` does. Some CPUs are first moved away from the
// defaults through sysfs so that the CPUs differ.
func TestPeerX86EnergyPerfPolicy(t *testing.T) {
	for _, p := range testbin.PeerTools(t) {
		p.Run(t, func(t *testing.T) { testPeerX86EnergyPerfPolicy(t, p) })
	}
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func testPeerX86EnergyPerfPolicy(t *testing.T, p testbin.Peer) {
	var env []string
	for _, kv := range p.Env {
		env = append(env, shellQuote(kv))
	}
	const cpu = "/sys/devices/system/cpu/"
	script := fmt.Sprintf(`
echo performance > %[1]scpu1/cpufreq/scaling_governor
echo power > %[1]scpu5/cpufreq/energy_performance_preference
echo 15 > %[1]scpu12/power/energy_perf_bias
echo 800000 > %[1]scpu13/cpufreq/scaling_max_freq
echo snapshot=$(hwpprobe snapshot --json | tr -d '\n')
env %[2]s %[3]s
`, cpu, strings.Join(env, " "), p.Tools["x86_energy_perf_policy"])
	out := inMachine(t, "mtl-165u", script)
	kv := keyValues(out)
	s := parseSnapshot(t, kv["snapshot"])
	peer := parsePeer(t, out)
	if len(peer) != 14 {
		t.Fatalf("x86_energy_perf_policy reported %d CPUs, want the 14 of mtl-165u:\n%s", len(peer), out)
	}
	if d := cmp.Diff(peer, snapDecode(t, s)); d != "" {
		t.Errorf("x86_energy_perf_policy vs hwpprobe snapshot (-x86_energy_perf_policy +hwpprobe):\n%s", d)
	}
	// The changes made above show in both: not a comparison of defaults.
	if p := peer[1]; p == nil || p.ReqMin != p.ReqMax || p.ReqEPP != 0 {
		t.Errorf("cpu1 under performance: %+v", p)
	}
	if p := peer[12]; p == nil || p.EPB != 15 {
		t.Errorf("cpu12 EPB: %+v, want 15", p)
	}
}
