// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// exporterUnder runs the exporter under `hwpemu run --busy 1 MACHINE`
// after every CPU is switched to performance and the shell commands pre,
// and returns its address; the session ends with the test (bounded).
func exporterUnder(t *testing.T, ctx context.Context, machine, pre string) string {
	t.Helper()
	dir := t.TempDir()
	script := `D=$1; H=$2
` + pre + allPerformance + `
"$H" exporter --listen 127.0.0.1:0 --min-interval 100ms 2> $D/log & P=$!
trap 'kill $P 2>/dev/null' EXIT
i=0; while [ ! -e $D/stop ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done`
	hwpemuSession(t, dir, "run", "--busy", "1", machine, "--", "sh", "-c", script, "sh", dir, hwpprobeBin)
	addr, err := exporterAddr(ctx, filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// TestExporterExcursions: hwpprobe_hwp_excursion_to_minimum and
// hwpprobe_hwp_excursions_seconds_total follow every CPU's IA32_HWP_STATUS
// bit 2 under hwpemu with all CPUs busy under performance (the model of
// TestDiffExcursionsEmulated): held at PL2 then PL1, every CPU is
// delivered less than its minimum, so the bit is 1 on all 14 CPUs and
// their seconds grow from one refresh to the next; with PL1 and PL2
// raised to 200 W the bit is 0 and the seconds stay 0, both present. On
// zen4-amd-pstate (CPUID leaf 6 without HWP) neither metric exists:
// absent, not 0.
func TestExporterExcursions(t *testing.T) {
	tests := []struct {
		name, machine, pre string
		bit                float64
		present            bool
	}{
		{"held", "mtl-165u", "", 1, true},
		{"free", "mtl-165u", raisePowerLimits, 0, true},
		{"no HWP", "zen4-amd-pstate", "", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			addr := exporterUnder(t, ctx, tc.machine, tc.pre)
			first := map[string]float64{}
			err := poll(ctx, func() error {
				m, err := scrape(ctx, addr)
				if err != nil {
					return err
				}
				if !tc.present {
					if m["hwpprobe_hwp_excursion_to_minimum"] != nil || m["hwpprobe_hwp_excursions_seconds_total"] != nil {
						return fmt.Errorf("excursion metrics served on a CPU without HWP_STATUS")
					}
					if _, ok := m.value("hwpprobe_cpu_busy_ratio", map[string]string{"cpu": "0"}); !ok {
						return fmt.Errorf("no sampled figures yet")
					}
					return nil
				}
				grown := 0
				for cpu := range 14 {
					l := map[string]string{"cpu": strconv.Itoa(cpu)}
					bit, ok1 := m.value("hwpprobe_hwp_excursion_to_minimum", l)
					secs, ok2 := m.value("hwpprobe_hwp_excursions_seconds_total", l)
					if !ok1 || !ok2 || bit != tc.bit {
						return fmt.Errorf("cpu%d: bit %v (present %v), seconds %v (present %v); want bit %v", cpu, bit, ok1, secs, ok2, tc.bit)
					}
					if tc.bit == 0 && secs != 0 {
						return fmt.Errorf("cpu%d: %v s of excursions without one", cpu, secs)
					}
					if f, seen := first[l["cpu"]]; !seen {
						first[l["cpu"]] = secs
					} else if secs > f {
						grown++
					}
				}
				if tc.bit == 1 && grown < 14 {
					return fmt.Errorf("excursion seconds grew on %d of 14 CPUs since the first scrape", grown)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
