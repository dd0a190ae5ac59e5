// SPDX-License-Identifier: Apache-2.0

package emu_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/emu"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpuid"
	"github.com/hwpprobe/hwpprobe/internal/machine/capture"
	"github.com/hwpprobe/hwpprobe/internal/testbin"
)

// envDump makes the test binary a reader: it prints, as JSON, the files
// and CPUID leaves named by the JSON spec in the variable, as the
// machine it runs on serves them, and exits.
const envDump = "HWPEMU_ROUNDTRIP_DUMP"

func TestMain(m *testing.M) {
	if spec := os.Getenv(envDump); spec != "" {
		var s dumpSpec
		if err := json.Unmarshal([]byte(spec), &s); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := json.NewEncoder(os.Stdout).Encode(dump("/", s)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// dumpSpec names what to read: paths relative to the root, and CPUID
// leaf/subleaf pairs per CPU.
type dumpSpec struct {
	Paths  []string
	Leaves map[int][]cpuid.Leaf
}

// machineView is what a program reads of a machine.
type machineView struct {
	Files    map[string]string // content, or "error: ..." for a failed read
	CPUID    map[string]cpuid.Regs
	StatRows []string // /proc/stat: each line's name and field count
}

var cpuMHz = regexp.MustCompile(`(?m)^cpu MHz\t\t: .*\n`)

func dump(root string, s dumpSpec) machineView {
	v := machineView{Files: map[string]string{}, CPUID: map[string]cpuid.Regs{}}
	for _, p := range s.Paths {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			v.Files[p] = "error: " + err.Error()
			continue
		}
		v.Files[p] = cpuMHz.ReplaceAllString(string(b), "") // the one figure that moves
	}
	dev := cpuid.Open(root)
	defer dev.Close()
	for cpu, leaves := range s.Leaves {
		for _, l := range leaves {
			r, err := dev.CPUID(cpu, l.Leaf, l.Subleaf)
			if err != nil {
				r = cpuid.Regs{EAX: 0xdead}
			}
			v.CPUID[fmt.Sprintf("cpu%d %#x.%d", cpu, l.Leaf, l.Subleaf)] = r
		}
	}
	if b, err := os.ReadFile(filepath.Join(root, "proc/stat")); err == nil {
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) > 0 && strings.HasPrefix(f[0], "cpu") {
				v.StatRows = append(v.StatRows, fmt.Sprintf("%s %d", f[0], len(f)))
			}
		}
	}
	return v
}

// hostSpec lists, from the host itself (not from the capture), the files
// and leaves to compare: /proc/cpuinfo, the CPU lists, every CPU's
// topology and cache files and online file, the cpufreq, intel_pstate,
// amd_pstate and powercap trees but for their moving counters; every
// CPUID leaf of every online CPU in the basic, hypervisor and extended
// ranges with subleaves 0-2 and those the capture lists.
func hostSpec(t *testing.T, d *emu.Description) dumpSpec {
	t.Helper()
	s := dumpSpec{Paths: []string{"proc/cpuinfo"}, Leaves: map[int][]cpuid.Leaf{}}
	const cpuDir = "sys/devices/system/cpu/"
	for _, g := range []string{"online", "present", "possible", "offline", "kernel_max", "cpu[0-9]*/online",
		"cpu[0-9]*/topology/*", "cpu[0-9]*/cache/index*/*", "cpu[0-9]*/power/energy_perf_bias"} {
		m, err := filepath.Glob("/" + cpuDir + g)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m {
			s.Paths = append(s.Paths, strings.TrimPrefix(p, "/"))
		}
	}
	moving := []string{"scaling_cur_freq", "cpuinfo_cur_freq", "energy_uj", "uevent"}
	for _, dir := range []string{cpuDir + "cpufreq", cpuDir + "intel_pstate", cpuDir + "amd_pstate", "sys/class/powercap"} {
		_ = filepath.WalkDir("/"+dir, func(p string, e fs.DirEntry, err error) error {
			if err == nil && e.Type().IsRegular() && !slices.Contains(moving, e.Name()) && !strings.Contains(p, "/stats/") {
				s.Paths = append(s.Paths, strings.TrimPrefix(p, "/"))
			}
			return nil
		})
	}
	if len(s.Paths) < 20 {
		t.Fatalf("only %d files to compare on this host: %v", len(s.Paths), s.Paths)
	}
	captured := map[uint32][]uint32{}
	for _, e := range d.CPUID {
		if e.Subleaf != nil && !slices.Contains(captured[e.Leaf], *e.Subleaf) {
			captured[e.Leaf] = append(captured[e.Leaf], *e.Subleaf)
		}
	}
	dev := cpuid.Open("/")
	defer dev.Close()
	for cpu := 0; cpu < d.NumCPUs(); cpu++ {
		if slices.Contains(d.Offline, cpu) {
			continue
		}
		for _, base := range []uint32{0, 0x40000000, 0x80000000} {
			top, err := dev.CPUID(cpu, base, 0)
			if err != nil {
				t.Fatalf("host cpuid: %v", err)
			}
			last := top.EAX
			if last < base || last-base > 0xff || (base == 0x40000000 && !d.Hypervisor) {
				last = base
			}
			for leaf := base; leaf <= last; leaf++ {
				for _, sub := range append([]uint32{0, 1, 2}, captured[leaf]...) {
					s.Leaves[cpu] = append(s.Leaves[cpu], cpuid.Leaf{Leaf: leaf, Subleaf: sub})
				}
			}
		}
	}
	return s
}

// Capture this host, serve the capture with hwpemu, and read it back: the
// files, the /proc/stat shape and every CPUID leaf of every CPU are the
// host's own, byte for byte (cpuinfo's "cpu MHz" aside).
func TestCaptureRoundTripThisHost(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("capture reads /dev/cpu/N/cpuid and hwpemu mounts FUSE: run as root (CI does)")
	}
	d, err := capture.Capture(capture.Options{Tool: "test"})
	if err != nil {
		t.Fatal(err)
	}
	data, err := capture.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "host.yaml")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	hwpemu, err := testbin.Build(dir, "../../cmd/hwpemu")
	if err != nil {
		t.Fatal(err)
	}
	spec := hostSpec(t, d)
	want := dump("/", spec)
	js, _ := json.Marshal(spec)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, hwpemu, "run", "--busy", "0", file, "--", self)
	cmd.Env = append(os.Environ(), envDump+"="+string(js))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hwpemu run: %v\n%s", err, stderrOf(err))
	}
	var got machineView
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("reader output: %v\n%s", err, out)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("served capture differs from this host (-host +served):\n%s", diff)
	}
	t.Logf("compared %d files and %d CPUID answers", len(want.Files), len(want.CPUID))
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
