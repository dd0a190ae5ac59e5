// SPDX-License-Identifier: Apache-2.0

package regs

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/testbin"
	"github.com/hwpprobe/hwpprobe/rapl"
)

// turbostatValues draws one random machine state: every register turbostat
// decodes on a Haswell-ULT, within the ranges turbostat needs to run (a
// non-zero TDP and RAPL time unit, TjMax above the readouts).
func turbostatValues(rng *rand.Rand, model uint32) map[uint32]uint64 {
	bits := func(n uint) uint64 { return rng.Uint64() & (1<<n - 1) }
	pick := func(bs ...uint) uint64 {
		var v uint64
		for _, b := range bs {
			if rng.IntN(2) == 1 {
				v |= 1 << b
			}
		}
		return v
	}
	base := 8 + bits(5)
	tj := 80 + uint64(rng.IntN(31))
	therm := func() uint64 {
		return 1<<31 | (1+bits(3))<<27 | uint64(rng.IntN(int(tj)))<<16 | bits(12)
	}
	v := map[uint32]uint64{
		hwp.MSR_IA32_MISC_ENABLE:            pick(0, 3, 7, 9, 11, 12, 16, 18, 22, 34, 38),
		hwp.MSR_PLATFORM_INFO:               (1+bits(3))<<40 | base<<8,
		hwp.MSR_TURBO_RATIO_LIMIT:           rng.Uint64(),
		hwp.MSR_IA32_PM_ENABLE:              1, // turbostat prints the HWP registers only when enabled
		hwp.MSR_IA32_HWP_CAPABILITIES:       bits(32),
		hwp.MSR_IA32_HWP_REQUEST:            rng.Uint64(),
		hwp.MSR_IA32_HWP_REQUEST_PKG:        rng.Uint64() &^ (1<<42 | 0x1f<<59),
		hwp.MSR_IA32_HWP_INTERRUPT:          bits(3),
		hwp.MSR_IA32_HWP_STATUS:             bits(6),
		hwp.MSR_CORE_PERF_LIMIT_REASONS_HSW: bits(32),
		hwp.MSR_GFX_PERF_LIMIT_REASONS:      bits(32),
		hwp.MSR_RING_PERF_LIMIT_REASONS:     bits(32),
		// turbostat replaces a zero time unit by 0xa (rapl_probe_intel);
		// the SDM has no such rule, so the test does not draw 0.
		rapl.MSR_RAPL_POWER_UNIT:          (1+bits(4)%15)<<16 | bits(5)<<8 | bits(4),
		rapl.MSR_PKG_POWER_INFO:           bits(6)<<48 | bits(15)<<32 | bits(15)<<16 | (1 + bits(14)),
		rapl.MSR_PKG_POWER_LIMIT:          rng.Uint64() &^ (0xff << 56 &^ (1 << 63)) &^ (0xff << 24),
		hwp.MSR_TEMPERATURE_TARGET:        tj << 16,
		hwp.MSR_IA32_THERM_STATUS:         therm(),
		hwp.MSR_IA32_PACKAGE_THERM_STATUS: therm() &^ (0xf<<27 | 1<<31 | 0xf000),
	}
	if hwp.TurboRatioLimit1Layout(6, model) != hwp.TRL1Unknown {
		v[hwp.MSR_TURBO_RATIO_LIMIT1] = rng.Uint64()
	}
	return v
}

var (
	tsLine  = regexp.MustCompile(`^cpu\d+: (MSR_\w+)(?::|,) 0x([0-9a-f]+)(?: \((.*)\))?$`)
	tsLimit = regexp.MustCompile(`^cpu\d+: (PKG Limit #[12]: .*)$`)
	tsRatio = regexp.MustCompile(`^(\d+) \* 100\.0 = [\d.]+ MHz (max efficiency frequency|base frequency|max turbo (\d+) active cores)$`)
	tsEPB   = regexp.MustCompile(`^cpu\d+: EPB: (\d+) \((\w+)\)$`)
)

// TestTurbostat is a differential test against the kernel's turbostat
// (Debian linux-cpupower): it reads random values of every register it
// decodes on a Haswell-ULT (CPUID 6:69, the model with turbostat's
// limit-reason tables) from an emulated /dev/cpu/N/msr, and each line of
// its configuration dump must match our decode of the same value.
func TestTurbostat(t *testing.T) {
	peers, stat, cpus := refSetup(t)
	for _, p := range peers {
		p.Run(t, func(t *testing.T) { testTurbostat(t, p, stat, cpus) })
	}
}

func testTurbostat(t *testing.T, p testbin.Peer, stat string, cpus int) {
	rng := rand.New(rand.NewPCG(3, 4))
	// Haswell-ULT has turbostat's limit-reason tables; Haswell-X keeps
	// ratios for 9-16 cores in MSR_TURBO_RATIO_LIMIT1, Skylake-X group
	// core counts.
	models := []uint32{0x45, 0x3f, 0x55}
	const rounds = 12
	checked := map[string]int{}
	for round := 0; round < rounds; round++ {
		model := models[round%len(models)]
		vals := turbostatValues(rng, model)
		epb := rng.IntN(16)
		files := map[string]string{
			"sys/devices/system/cpu/present":  fmt.Sprintf("0-%d\n", cpus-1),
			"sys/devices/system/cpu/possible": fmt.Sprintf("0-%d\n", cpus-1),
			"sys/devices/system/cpu/online":   fmt.Sprintf("0-%d\n", cpus-1),
		}
		base := uint32(vals[hwp.MSR_PLATFORM_INFO]>>8&0xff) * 100
		spec := refSpec{Tool: p.Tools["turbostat"], Args: []string{"--debug", "--num_iterations", "1", "--interval", "0.01"},
			Shim: p.Env, Stat: stat, MSRs: map[int]map[uint32]uint64{}, Zero: true, Files: files,
			Until: `re-initialized|jitter|Avg_MHz|Busy%`,
			// Family 6 and the model, stepping 1 (Haswell-ULT is
			// 0x40651); leaf 6 as for HWP machines, plus PTM (EAX bit
			// 6) so that the package thermal status is read.
			CPUID: intelCPUID(model, [4]uint32{0xfc7, 0, 0x9, 0}, base, base+1000)}
		for cpu := 0; cpu < cpus; cpu++ {
			spec.MSRs[cpu] = vals
			d := fmt.Sprintf("sys/devices/system/cpu/cpu%d/", cpu)
			for f, v := range map[string]string{
				"online": "1", "power/energy_perf_bias": strconv.Itoa(epb),
				"topology/physical_package_id": "0", "topology/die_id": "0", "topology/core_id": strconv.Itoa(cpu),
				"topology/cluster_id": strconv.Itoa(cpu), "topology/thread_siblings": fmt.Sprintf("%x", 1<<cpu),
				"topology/thread_siblings_list": strconv.Itoa(cpu), "topology/core_cpus": fmt.Sprintf("%x", 1<<cpu),
				"topology/core_cpus_list": strconv.Itoa(cpu), "topology/core_siblings": fmt.Sprintf("%x", 1<<cpus-1),
				"topology/core_siblings_list": fmt.Sprintf("0-%d", cpus-1), "topology/package_cpus": fmt.Sprintf("%x", 1<<cpus-1),
				"topology/package_cpus_list": fmt.Sprintf("0-%d", cpus-1), "topology/die_cpus": fmt.Sprintf("%x", 1<<cpus-1),
				"topology/die_cpus_list": fmt.Sprintf("0-%d", cpus-1),
			} {
				files[d+f] = v + "\n"
			}
		}
		out := string(runRef(t, spec))
		compareTurbostat(t, out, vals, model, epb, checked)
		if t.Failed() {
			t.Logf("turbostat output:\n%s", out)
			return
		}
	}
	for _, name := range []string{"IA32_MISC_ENABLE", "MSR_PLATFORM_INFO", "MSR_TURBO_RATIO_LIMIT", "IA32_PM_ENABLE",
		"IA32_HWP_CAPABILITIES", "IA32_HWP_REQUEST", "IA32_HWP_REQUEST_PKG", "IA32_HWP_INTERRUPT", "IA32_HWP_STATUS",
		"MSR_CORE_PERF_LIMIT_REASONS_HSW", "MSR_GFX_PERF_LIMIT_REASONS", "MSR_RING_PERF_LIMIT_REASONS",
		"MSR_RAPL_POWER_UNIT", "MSR_PKG_POWER_INFO", "MSR_PKG_POWER_LIMIT", "MSR_TEMPERATURE_TARGET",
		"IA32_THERM_STATUS", "IA32_PACKAGE_THERM_STATUS", "EPB", "MSR_TURBO_RATIO_LIMIT1"} {
		if checked[name] == 0 {
			t.Errorf("%s never compared: %v", name, checked)
		}
	}
	t.Logf("compared with turbostat: %v", checked)
}

// compareTurbostat checks turbostat's dump of vals against our decodes.
func compareTurbostat(t *testing.T, out string, vals map[uint32]uint64, model uint32, epb int, checked map[string]int) {
	t.Helper()
	ctx := Context{}
	for a, v := range vals {
		ctx[a] = v
	}
	ctx[CPUSignature] = Signature(6, model)
	dec := func(addr uint32) Decoded {
		r, _ := ByAddress(addr)
		return r.Decode(vals[addr], ctx)
	}
	u := func(d Decoded, f string) uint64 { v, _ := d.Field(f); return v.(uint64) }
	var ratios, wantRatios []string
	last := ""
	for _, line := range strings.Split(out, "\n") {
		if m := tsRatio.FindStringSubmatch(line); m != nil {
			switch {
			case last == "MSR_PLATFORM_INFO" && m[2] == "max efficiency frequency":
				d := dec(hwp.MSR_PLATFORM_INFO)
				if m[1] != strconv.FormatUint(u(d, "max_efficiency_ratio"), 10) {
					t.Errorf("turbostat %q; we %s", line, d.Text())
				}
			case last == "MSR_PLATFORM_INFO" && m[2] == "base frequency":
				d := dec(hwp.MSR_PLATFORM_INFO)
				if m[1] != strconv.FormatUint(u(d, "base_ratio"), 10) {
					t.Errorf("turbostat %q; we %s", line, d.Text())
				}
				checked["MSR_PLATFORM_INFO"]++
			case (last == "MSR_TURBO_RATIO_LIMIT" || last == "MSR_TURBO_RATIO_LIMIT1") && m[3] != "":
				ratios = append(ratios, m[3]+"c "+m[1])
			}
			continue
		}
		if m := tsLimit.FindStringSubmatch(line); m != nil {
			d := dec(rapl.MSR_PKG_POWER_LIMIT)
			// turbostat computes the window with (1 << Y) in an int,
			// which overflows to a negative number for Y = 31.
			raw := vals[rapl.MSR_PKG_POWER_LIMIT]
			y := raw >> 17 & 0x1f
			if strings.HasPrefix(m[1], "PKG Limit #2") {
				y = raw >> 49 & 0x1f
			}
			if y == 31 {
				m[1] = strings.Replace(m[1], "Watts, -", "Watts, ", 1)
			}
			if !strings.Contains(d.Summary, m[1]) {
				t.Errorf("turbostat %q; we %s", line, d.Text())
			}
			continue
		}
		if m := tsEPB.FindStringSubmatch(line); m != nil {
			if m[1] != strconv.Itoa(epb) || m[2] != hwp.EPBTurbostatName(uint8(epb)) {
				t.Errorf("turbostat %q; we %d (%s)", line, epb, hwp.EPBTurbostatName(uint8(epb)))
			}
			checked["EPB"]++
			continue
		}
		m := tsLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		last = m[1]
		r, err := Lookup(m[1])
		switch {
		case m[1] == "MSR_CORE_PERF_LIMIT_REASONS": // turbostat's name for 0x690
			r, _ = ByAddress(hwp.MSR_CORE_PERF_LIMIT_REASONS_HSW)
		case err != nil:
			continue // a register outside the catalog (C-states, config TDP, ...)
		}
		raw, _ := strconv.ParseUint(m[2], 16, 64)
		if raw != vals[r.Address] {
			continue // not one of ours (read as 0)
		}
		d := r.Decode(raw, ctx)
		got, want := m[3], d.Summary
		switch r.Address {
		case hwp.MSR_IA32_HWP_REQUEST, hwp.MSR_IA32_HWP_REQUEST_PKG:
			// turbostat prints (raw >> 32) & 0xff3 as the window: bits
			// 2-3 of the field are lost and bits 42-43 (package
			// control) come in. Ours is the whole 10-bit field.
			if u(d, "activity_window") != raw>>32&0x3ff {
				t.Errorf("%s 0x%x: activity_window %#x", r.Name, raw, u(d, "activity_window"))
			}
			want = fmt.Sprintf("min %d max %d des %d epp 0x%x window 0x%x", u(d, "min"), u(d, "max"), u(d, "desired"), u(d, "epp"), raw>>32&0xff3)
			if r.Address == hwp.MSR_IA32_HWP_REQUEST {
				want += fmt.Sprintf(" pkg 0x%x", u(d, "package_control"))
			}
		case hwp.MSR_TEMPERATURE_TARGET:
			// Models without TCC offset bits in turbostat print "(%d C)",
			// TjMax; the others print our form.
			if !strings.Contains(got, "default") {
				want = fmt.Sprintf("%d C", d.Fields[0].Value)
			}
		case hwp.MSR_IA32_THERM_STATUS, hwp.MSR_IA32_PACKAGE_THERM_STATUS:
			want, _, _ = strings.Cut(want, ", active:")
		case rapl.MSR_PKG_POWER_LIMIT:
			want = "UNlocked"
			if raw>>63 != 0 {
				want = "locked"
			}
		case hwp.MSR_CORE_PERF_LIMIT_REASONS_HSW, hwp.MSR_GFX_PERF_LIMIT_REASONS, hwp.MSR_RING_PERF_LIMIT_REASONS:
			// turbostat leaves ", " after each name.
			got = strings.ReplaceAll(got, ", )", ")")
			got = strings.TrimSuffix(got, ", ")
		case hwp.MSR_TURBO_RATIO_LIMIT, hwp.MSR_TURBO_RATIO_LIMIT1:
			// The "N * 100.0 = ... max turbo C active cores" lines.
			for i := 1; i <= 16; i++ {
				if v, ok := d.Field(fmt.Sprintf("ratio_%dc", i)); ok && v.(uint64) != 0 {
					wantRatios = append(wantRatios, fmt.Sprintf("%dc %d", i, v))
				}
				if v, ok := d.Field(fmt.Sprintf("group%d_ratio", i)); ok {
					c, _ := d.Field(fmt.Sprintf("group%d_cores", i))
					wantRatios = append(wantRatios, fmt.Sprintf("%dc %d", c, v))
				}
			}
			if len(d.Assumptions) > 0 {
				t.Errorf("%s with --cpu 6:%#x: assumptions %q", r.Name, model, d.Assumptions)
			}
			checked[r.Name]++
			continue
		case hwp.MSR_PLATFORM_INFO:
			continue // checked on the frequency lines
		}
		if got != want {
			t.Errorf("%s 0x%x: turbostat (%s), we (%s)", r.Name, raw, got, want)
		}
		checked[r.Name]++
	}
	sort.Strings(ratios)
	sort.Strings(wantRatios)
	if diff := cmp.Diff(wantRatios, ratios); diff != "" {
		t.Errorf("MSR_TURBO_RATIO_LIMIT 0x%x: -ours +turbostat:\n%s", vals[hwp.MSR_TURBO_RATIO_LIMIT], diff)
	}
}
