// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// traceJSONEvent is the part of a `trace --json` event line these tests
// read.
type traceJSONEvent struct {
	CPU      int    `json:"cpu"`
	PID      int    `json:"pid"`
	Comm     string `json:"comm"`
	MSR      string `json:"msr"`
	Value    string `json:"value"`
	Old      string `json:"old"`
	Emulated bool   `json:"emulated"`
}

// TestTraceEmulatedWrites traces under `hwpemu run mtl-165u` while a shell
// switches cpu0 to the performance governor and sets cpu4's EPP to
// "power". The emulated machine's writes are the ones intel_pstate makes
// (intel_pstate_set_policy(): IA32_PERF_CTL 0x199 then
// intel_pstate_hwp_set(): IA32_HWP_REQUEST 0x774 with min = max = 62 and
// EPP 0; the EPP store: HWP_REQUEST with EPP 255, Meteor Lake's "power"),
// with the old values of emu/machines/mtl-165u.yaml after the driver's
// start (EPP 64 = balance_performance, min 5 / 4, max 62 / 38), the
// shell's pid and comm. The kernel's own writes of the TSC deadline
// (0x6e0, written all the time on the CI VMs) are traced beside them.
func TestTraceEmulatedWrites(t *testing.T) {
	dir := t.TempDir()
	hwpemu := hwpemuBin(t)
	pidFile := filepath.Join(dir, "sh.pid")
	const cpu = "/sys/devices/system/cpu/"
	script := "echo $$ > " + pidFile + "; echo performance > " + cpu + "cpufreq/policy0/scaling_governor; " +
		"echo power > " + cpu + "cpufreq/policy4/energy_performance_preference; sleep 0.2"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, hwpemu, "run", "mtl-165u", "--", hwpprobeBin, "trace", "--json", "--events", "none",
		"--msr", "HWP_REQUEST,PERF_CTL,EPB,0x6e0", "--", "sh", "-c", script)
	cmd.WaitDelay = 5 * time.Second
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ctx.Err() != nil {
		t.Fatalf("hwpemu run ... trace did not end within 2 minutes\n%s", stderr.String())
	}
	if err != nil {
		t.Fatalf("hwpemu run ... trace: %v\n%s", err, stderr.String())
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	var emulated []traceJSONEvent
	kernel := 0
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for _, l := range lines[:len(lines)-1] {
		var e traceJSONEvent
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if e.Emulated {
			emulated = append(emulated, e)
		} else if e.MSR == "0x6e0" {
			kernel++
		}
	}
	want := []traceJSONEvent{
		{CPU: 0, PID: pid, Comm: "sh", MSR: "0x199", Old: "0x1100", Value: "0x3e00", Emulated: true},
		{CPU: 0, PID: pid, Comm: "sh", MSR: "0x774", Old: "0x40003e05", Value: "0x3e3e", Emulated: true},
		{CPU: 4, PID: pid, Comm: "sh", MSR: "0x774", Old: "0x40002604", Value: "0xff002604", Emulated: true},
	}
	if diff := cmp.Diff(want, emulated); diff != "" {
		t.Errorf("emulated writes (-want +got):\n%s", diff)
	}
	if kernel == 0 {
		t.Errorf("no kernel write of 0x6e0 traced beside the emulated ones")
	}
	var summary struct {
		Summary struct {
			Counters struct{ Emulated, Lost uint64 }
		}
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &summary); err != nil {
		t.Fatal(err)
	}
	if c := summary.Summary.Counters; c.Emulated != 3 || c.Lost != 0 {
		t.Errorf("summary counters %+v, want 3 emulated, 0 lost", c)
	}
}
