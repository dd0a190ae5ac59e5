// SPDX-License-Identifier: Apache-2.0

package profile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/emu"
	"github.com/hwpprobe/hwpprobe/internal/emu/fusefs"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
	"github.com/hwpprobe/hwpprobe/internal/sysdump"
)

// mount serves an emulated machine (emu/machines) through FUSE at a
// temporary directory and returns options rooted there, with a journal
// directory of the test's own.
func mount(t *testing.T, name string) Options {
	t.Helper()
	m, err := emu.Load(name, emu.WithLoad(emu.ConstLoad{0.5}))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	srv, err := fusefs.Mount(dir, m.Tree(), fusefs.Options{Name: "profile-test", SelfReader: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			t.Error(err)
		}
	})
	return Options{FS: sysfs.NewFS(dir), JournalDir: t.TempDir()}
}

func dump(t *testing.T, o Options) map[string]string {
	t.Helper()
	d, err := sysdump.Dump(o.FS.Root())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// write writes a sysfs file of the emulated machine (test setup).
func write(t *testing.T, o Options, path, value string) {
	t.Helper()
	if err := os.WriteFile(o.FS.Path(path), []byte(value), 0); err != nil {
		t.Fatal(err)
	}
}

func mustParse(t *testing.T, s string) *Profile {
	t.Helper()
	p, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSwitchAndRestore applies several profiles in turn under one
// journal and restores: every file under /sys/devices/system/cpu and
// every request register is back, byte for byte.
func TestSwitchAndRestore(t *testing.T) {
	for machine, profiles := range map[string][]string{
		"mtl-165u": {"performance", "powersave:epp=power,epb=15", "no_turbo=1,min_perf_pct=60,max_perf_pct=80,scaling_max_freq=1.5GHz@4-11",
			"powersave:epp=performance@0-3,epp=balance_power@4-13,epb=balance-performance", "performance:epp=0,scaling_min_freq=1GHz@0-3"},
		"zen4-amd-pstate": {"performance", "powersave:epp=power", "boost=0,scaling_max_freq=3GHz", "powersave:epp=balance_power@0-15,scaling_min_freq=2GHz"},
	} {
		t.Run(machine, func(t *testing.T) {
			o := mount(t, machine)
			before := dump(t, o)
			sw, err := Begin(o, profiles[0])
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range profiles {
				if _, err := sw.Apply(mustParse(t, s)); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
				if cmp.Equal(before, dump(t, o)) {
					t.Errorf("%s changed nothing", s)
				}
			}
			res, err := sw.Restore()
			if err != nil || len(res.Failed) > 0 {
				t.Fatalf("restore: %v %v", err, res.Failed)
			}
			if d := cmp.Diff(before, dump(t, o)); d != "" {
				t.Errorf("not back after restore (-before +after):\n%s", d)
			}
			if _, err := os.Stat(filepath.Join(o.JournalDir, journalFile)); !os.IsNotExist(err) {
				t.Errorf("journal left after a complete restore: %v", err)
			}
		})
	}
}

// TestSavedEPP: a CPU in performance holds, in intel_pstate, the EPP it
// gets back on leaving performance (epp_powersave). A profile that moves
// it to powersave with another EPP, and its restore, must leave that
// saved EPP as it was: after the restore, switching to powersave gives
// the EPP of before, not the profile's.
func TestSavedEPP(t *testing.T) {
	o := mount(t, "mtl-165u")
	write(t, o, Path(EPP, 0), "balance_power") // 179, saved by the switch below
	write(t, o, Path(Governor, 0), "performance")
	before := dump(t, o)
	sw, err := Begin(o, "x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sw.Apply(mustParse(t, "powersave:epp=power")); err != nil {
		t.Fatal(err)
	}
	if got := sw.journal.Original.CPU(0).SavedEPP; got != "balance_power" {
		t.Errorf("journal saved EPP %q, want balance_power", got)
	}
	if _, err := sw.Restore(); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(before, dump(t, o)); d != "" {
		t.Errorf("not back (-before +after):\n%s", d)
	}
	write(t, o, Path(Governor, 0), "powersave")
	if got, _ := o.FS.ReadString(Path(EPP, 0)); got != "balance_power" {
		t.Errorf("leaving performance after the restore gives EPP %q, want balance_power (the EPP intel_pstate had saved)", got)
	}
}

// TestRefusals: profiles the machine or the kernel refuse are refused by
// Plan, before any write, with the rule.
func TestRefusals(t *testing.T) {
	tests := []struct {
		machine, profile string
		want             error
		part             string
	}{
		{"mtl-165u", "schedutil", ErrRefused, "offers performance, powersave"},
		{"mtl-165u", "performance:epp=performance", ErrRefused, `"performance" is EPP 16 on this model`},
		{"mtl-165u", "performance:epp=balance_power", ErrRefused, "EBUSY"},
		{"mtl-165u", "performance:epp=default", ErrRefused, "boot-time EPP"},
		{"mtl-165u", "epp=power@14", ErrRefused, "CPU 14 is not online"},
		{"mtl-165u", "scaling_max_freq=6GHz", ErrRefused, "takes 400000-4900000 kHz"},
		{"mtl-165u", "scaling_max_freq=2GHz,scaling_min_freq=3GHz@0", ErrRefused, "above scaling_max_freq"},
		{"mtl-165u", "boost=1", ErrRefused, "intel_pstate has no_turbo"},
		{"mtl-165u", "min_perf_pct=100,max_perf_pct=100", nil, ""},
		{"mtl-165u", "performance:epp=0", nil, ""},
		{"zen4-amd-pstate", "performance:epp=power", ErrRefused, "amd-pstate refuses"},
		{"zen4-amd-pstate", "performance:epp=performance", nil, ""},
		{"zen4-amd-pstate", "epp=128", ErrRefused, "only the names"},
		{"zen4-amd-pstate", "no_turbo=1", ErrRefused, "intel_pstate is not the driver"},
		{"vm-bare", "performance", ErrNoCPUFreq, "no cpufreq scaling driver is loaded"},
		{"vm-bare", "epb=0", ErrRefused, "no EPB feature"},
	}
	mounts := map[string]Options{}
	for _, tt := range tests {
		o, ok := mounts[tt.machine]
		if !ok {
			o = mount(t, tt.machine)
			mounts[tt.machine] = o
		}
		m, err := ReadMachine(o.FS)
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Plan(mustParse(t, tt.profile))
		if tt.want == nil {
			if err != nil {
				t.Errorf("%s on %s: %v", tt.profile, tt.machine, err)
			}
			continue
		}
		if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.part) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s on %s: %v, want one line wrapping %v with %q", tt.profile, tt.machine, err, tt.want, tt.part)
		}
	}
}

// TestWriteOrder: the plan writes in the order the kernel accepts.
func TestWriteOrder(t *testing.T) {
	o := mount(t, "mtl-165u")
	m, err := ReadMachine(o.FS)
	if err != nil {
		t.Fatal(err)
	}
	write(t, o, Path(MaxPerfPct, 0), "50")
	m.State.Globals[MaxPerfPct] = "50"
	pl, err := m.Plan(mustParse(t, "epb=0@0,governor=powersave@0,epp=power@0,min_perf_pct=80,max_perf_pct=90,no_turbo=0,scaling_max_freq=2GHz@0"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range pl.Writes {
		got = append(got, fmt.Sprintf("%s=%s", w.Key, w.Value))
	}
	want := []string{"no_turbo=0", "max_perf_pct=90", "min_perf_pct=80", "scaling_max_freq=2000000", "governor=powersave", "epp=power", "epb=0"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("write order (-want +got):\n%s", d)
	}
}

// TestJournalRefusesSecondChanger: while a journal exists, another
// Begin refuses with its owner; Restore (twice) brings everything back.
func TestJournalRefusesSecondChanger(t *testing.T) {
	o := mount(t, "mtl-165u")
	before := dump(t, o)
	sw, err := Begin(o, "powersave:epp=power")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sw.Apply(mustParse(t, "powersave:epp=power")); err != nil {
		t.Fatal(err)
	}
	// While the switcher holds the lock (apply with a command running),
	// another changer is refused at once, and restore says whose it is.
	if _, err := Begin(o, "performance"); !errors.Is(err, ErrJournalExists) {
		t.Errorf("Begin while another holds the lock: %v", err)
	}
	defer func(d time.Duration) { lockWait = d }(lockWait)
	lockWait = 200 * time.Millisecond
	if _, err := Restore(o); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "still running") {
		t.Errorf("Restore while another holds the lock: %v", err)
	}
	sw.Release() // as `hwpprobe apply` without a command, or a crash
	_, err = Begin(o, "performance")
	if !errors.Is(err, ErrJournalExists) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) ||
		!strings.Contains(err.Error(), "hwpprobe restore") {
		t.Fatalf("second Begin: %v", err)
	}
	for i := range 2 {
		res, err := Restore(o)
		if err != nil {
			t.Fatalf("restore %d: %v", i, err)
		}
		if (res.Journal == nil) != (i == 1) {
			t.Errorf("restore %d: journal %v", i, res.Journal)
		}
	}
	if d := cmp.Diff(before, dump(t, o)); d != "" {
		t.Errorf("not back (-before +after):\n%s", d)
	}
}

// TestRestoreConcurrently: two restores at once both succeed, one of
// them finding nothing left to do.
func TestRestoreConcurrently(t *testing.T) {
	o := mount(t, "zen4-amd-pstate")
	before := dump(t, o)
	sw, err := Begin(o, "performance")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sw.Apply(mustParse(t, "governor=performance,boost=0")); err != nil {
		t.Fatal(err)
	}
	sw.Release()
	errs := make(chan error, 2)
	for range 2 {
		go func() { _, err := Restore(o); errs <- err }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if d := cmp.Diff(before, dump(t, o)); d != "" {
		t.Errorf("not back (-before +after):\n%s", d)
	}
}
