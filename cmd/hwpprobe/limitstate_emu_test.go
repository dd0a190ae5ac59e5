// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hwpprobe/hwpprobe/hwp"
)

// limitStateRun runs snapshot --json and watch under `hwpemu run --busy 1
// mtl-165u` (with hwpemu's extra flags) after every CPU is switched to the
// performance governor and the shell commands pre, and returns the
// snapshot (JSON and text) and watch's output.
func limitStateRun(t *testing.T, flags []string, pre string) (snapJSON []byte, snapText, watch string) {
	t.Helper()
	dir := t.TempDir()
	snap, wat := filepath.Join(dir, "snap.json"), filepath.Join(dir, "watch.txt")
	script := pre + allPerformance + "sleep 1; " +
		hwpprobeBin + " snapshot --json > " + snap + " && " + hwpprobeBin + " snapshot > " + snap + ".txt && " +
		hwpprobeBin + " watch -i 200ms -n 2 --show PkgWatt,Limits,ExcMin > " + wat
	runEmu(t, 2*time.Minute, append(append([]string{"run", "--busy", "1"}, flags...), "mtl-165u", "--", "sh", "-c", script)...)
	s, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	w, err := os.ReadFile(wat)
	if err != nil {
		t.Fatal(err)
	}
	txt, err := os.ReadFile(snap + ".txt")
	if err != nil {
		t.Fatal(err)
	}
	return s, string(txt), string(w)
}

// TestLimitStateEmulated: snapshot and watch show the limit state under
// hwpemu mtl-165u with all 14 CPUs busy under `performance`, whose
// requests would draw 69.4 W (docs/emulator.md).
//
//   - Held: with --time-scale 28, PL1's 28 s window is 1 s, so a second
//     after the switch the package has been held at PL2 (57 W) and then,
//     from 1 s x ln((57 - 0.8) / (57 - 15)) = 0.29 s on, at PL1 (15 W):
//     MSR_CORE_PERF_LIMIT_REASONS has PL1's status (bit 10) and the logs
//     of PL1 and PL2 (bits 26, 27), and every CPU, asked for min = max,
//     got less: IA32_HWP_STATUS bit 2 on all 14. The package stays below
//     TjMax (at 15 W the thermal model settles at 35 + 2.5 x 15 = 72.5 C).
//   - Free: PL1 and PL2 raised to 200 W through powercap and no time
//     scale: nothing limits the 69.4 W, the register reads 0 and no CPU
//     has the excursion bit.
//
// The bits are checked with hwp.DecodeLimitReasons over the SDM's table
// and hwp.DecodeStatus on the raw values the snapshot carries.
func TestLimitStateEmulated(t *testing.T) {
	tests := []struct {
		name       string
		flags      []string
		pre        string
		raw        uint64 // MSR_CORE_PERF_LIMIT_REASONS
		active     []string
		excursions int
		limits     string // watch's Limits in the machine row
		text       []string
	}{
		{"held", []string{"--time-scale", "28"}, "", 1<<10 | 1<<26 | 1<<27, []string{"PkgPwrL1"}, 14, "PkgPwrL1",
			[]string{"limit reasons 0x0c000400: active PkgPwrL1; logged PkgPwrL1, PkgPwrL2 (SDM vol. 4 MSR 64FH",
				"HWP_STATUS Excursion_To_Minimum (sticky, since last cleared): set on 4 of 4 CPUs (0-3)", "set on 8 of 8 CPUs (4-11)", "set on 2 of 2 CPUs (12-13)"}},
		{"free", nil, raisePowerLimits,
			0, []string{}, 0, "none",
			[]string{"limit reasons 0x00000000: active none; logged none", "cleared): set on 0 of 4 CPUs\n",
				"set on 0 of 8 CPUs\n", "set on 0 of 2 CPUs\n", "powercap intel-rapl:0 (msr): PL1 200.000 Watts"}},
	}
	table, ok := hwp.SDMCoreLimitTable(6, 0xAA)
	if !ok {
		t.Fatal("no SDM table for Meteor Lake-L")
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sb, text, watch := limitStateRun(t, tc.flags, tc.pre)
			for _, w := range tc.text {
				if !strings.Contains(text, w) {
					t.Errorf("snapshot text lacks %q:\n%s", w, text)
				}
			}
			var snap struct {
				Groups []struct {
					CPUs []struct {
						CPU       int `json:"cpu"`
						Registers struct {
							HWPStatus *struct {
								Raw          string `json:"raw"`
								ExcursionMin bool   `json:"excursion_to_minimum"`
							} `json:"hwp_status"`
						} `json:"registers"`
					} `json:"cpus"`
				} `json:"groups"`
				Packages []struct {
					TjMax        int  `json:"tjmax_c"`
					Temperature  *int `json:"package_temperature_c"`
					LimitReasons *struct {
						Raw    string   `json:"raw"`
						Table  string   `json:"table"`
						Active []string `json:"active"`
						Logged []string `json:"logged"`
					} `json:"limit_reasons"`
				} `json:"packages"`
			}
			if err := json.Unmarshal(sb, &snap); err != nil {
				t.Fatalf("snapshot --json: %v\n%s", err, sb)
			}
			if len(snap.Packages) != 1 || snap.Packages[0].LimitReasons == nil {
				t.Fatalf("no limit reasons in the snapshot:\n%s", sb)
			}
			p := snap.Packages[0]
			raw, err := strconv.ParseUint(p.LimitReasons.Raw, 0, 64)
			if err != nil || raw != tc.raw {
				t.Errorf("limit reasons %s (%v), want %#x", p.LimitReasons.Raw, err, tc.raw)
			}
			wantA, wantL := hwp.DecodeLimitReasons(raw, table)
			if !slices.Equal(p.LimitReasons.Active, append([]string{}, wantA...)) || !slices.Equal(p.LimitReasons.Logged, append([]string{}, wantL...)) ||
				!slices.Equal(p.LimitReasons.Active, tc.active) || p.LimitReasons.Table != table.Name {
				t.Errorf("limit reasons %+v, want active %q logged %q by %q", *p.LimitReasons, wantA, wantL, table.Name)
			}
			if p.Temperature == nil || *p.Temperature >= p.TjMax {
				t.Errorf("package temperature %v, TjMax %d: want below", p.Temperature, p.TjMax)
			}
			exc, read := 0, 0
			for _, g := range snap.Groups {
				for _, c := range g.CPUs {
					st := c.Registers.HWPStatus
					if st == nil {
						continue
					}
					read++
					v, err := strconv.ParseUint(st.Raw, 0, 64)
					if err != nil || hwp.DecodeStatus(v).ExcursionMin != st.ExcursionMin {
						t.Errorf("cpu%d hwp_status %+v (%v): the flag is not bit 2 of raw", c.CPU, *st, err)
					}
					if st.ExcursionMin {
						exc++
					}
				}
			}
			if read != 14 || exc != tc.excursions {
				t.Errorf("HWP_STATUS read on %d CPUs, excursion on %d; want 14 and %d", read, exc, tc.excursions)
			}
			// The machine row of watch's last sample: Limits and ExcMin.
			rows := regexp.MustCompile(`(?m)^\s+-\s+-\s+-\s+-\s+\S+\s+(\S+)\s+(\S+)$`).FindAllStringSubmatch(watch, -1)
			if len(rows) != 2 {
				t.Fatalf("%d machine rows in watch, want 2:\n%s", len(rows), watch)
			}
			if last := rows[1]; last[1] != tc.limits || last[2] != strconv.Itoa(tc.excursions)+"/14" {
				t.Errorf("watch Limits %q ExcMin %q, want %q and %d/14:\n%s", last[1], last[2], tc.limits, tc.excursions, watch)
			}
		})
	}
}
