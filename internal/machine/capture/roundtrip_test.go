// SPDX-License-Identifier: Apache-2.0

package capture_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/emu"
	"github.com/hwpprobe/hwpprobe/internal/testbin"
)

// bins are the project's commands, built once per test.
type bins struct{ dir, hwpemu, hwpprobe string }

func build(t *testing.T) bins {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("hwpemu mounts FUSE in a private namespace: run as root (CI does)")
	}
	dir := t.TempDir()
	b := bins{dir: dir}
	var err error
	if b.hwpemu, err = testbin.Build(dir, "../../../cmd/hwpemu"); err != nil {
		t.Fatal(err)
	}
	if b.hwpprobe, err = testbin.Build(dir, "../../../cmd/hwpprobe"); err != nil {
		t.Fatal(err)
	}
	return b
}

// emuRun runs argv under `hwpemu run --busy 0 machine` and returns its
// standard output; a failure fails the test.
func (b bins) emuRun(t *testing.T, machine string, argv ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.hwpemu, append([]string{"run", "--busy", "0", machine, "--"}, argv...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hwpemu run %s -- %v: %v\n%s", machine, argv, err, stderr.String())
	}
	return string(out)
}

// snapshotJSON is `hwpprobe snapshot --json` with the machine's name (the
// emulated marker, which names the original and the capture differently)
// replaced by MACHINE.
func (b bins) snapshotJSON(t *testing.T, machine, name string) any {
	t.Helper()
	out := b.emuRun(t, machine, b.hwpprobe, "snapshot", "--json")
	out = strings.ReplaceAll(out, `"`+name+`"`, `"MACHINE"`)
	out = strings.ReplaceAll(out, `\"`+name+`\"`, `\"MACHINE\"`)
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("snapshot --json: %v\n%s", err, out)
	}
	return v
}

// Capture inside an emulated machine, serve the capture: hwpprobe snapshot
// reads the same machine from both (every sysfs value, register and
// finding), the emulated marker's name aside.
func TestCaptureEmulatedRoundTrip(t *testing.T) {
	b := build(t)
	for _, machine := range []string{"mtl-165u", "zen4-amd-pstate"} {
		t.Run(machine, func(t *testing.T) {
			file := filepath.Join(b.dir, machine+".yaml")
			out := b.emuRun(t, machine, b.hwpprobe, "capture", "-o", file)
			if !strings.Contains(out, "captured captured-"+machine) {
				t.Errorf("capture said %q", out)
			}
			d := loadDesc(t, file)
			if d.Captured == nil || d.Captured.Emulated != machine || len(d.Unreadable) != 0 {
				t.Errorf("provenance %+v, unreadable %v: want emulated %s and nothing unreadable", d.Captured, d.Unreadable, machine)
			}
			want := b.snapshotJSON(t, machine, machine)
			got := b.snapshotJSON(t, file, d.Name)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("snapshot of the capture differs (-original +capture):\n%s", diff)
			}
			if d.Vendor == "GenuineIntel" {
				b.peerCheck(t, machine, file)
			}
		})
	}
}

// peerCheck: the kernel's x86_energy_perf_policy, on each CPUID path this
// host can take, reads the same EPB, HWP requests and capabilities from
// the original and from its capture.
func (b bins) peerCheck(t *testing.T, machine, file string) {
	for _, p := range testbin.PeerTools(t) {
		p.Run(t, func(t *testing.T) {
			argv := append(append([]string{"env"}, p.Env...), p.Tools["x86_energy_perf_policy"])
			want := b.emuRun(t, machine, argv...)
			got := b.emuRun(t, file, argv...)
			n := strings.Count(want, "HWP_REQ:")
			t.Logf("%d HWP_REQ lines", n)
			if n == 0 {
				t.Fatalf("x86_energy_perf_policy printed no HWP request on %s:\n%s", machine, want)
			}
			if diff := cmp.Diff(strings.Split(want, "\n"), strings.Split(got, "\n")); diff != "" {
				t.Errorf("x86_energy_perf_policy (-original +capture):\n%s", diff)
			}
		})
	}
}

func loadDesc(t *testing.T, file string) *emu.Description {
	t.Helper()
	data, err := emu.ReadDescriptionFile(file)
	if err != nil {
		t.Fatal(err)
	}
	d, err := emu.ParseDescription(data)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
