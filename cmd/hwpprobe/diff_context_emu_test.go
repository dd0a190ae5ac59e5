// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
)

// TestDiffDaemons: with a process named thermald running under the
// emulated machine, diff refuses (one line naming it and --allow-daemons,
// status 2, no file, the settings unchanged); with --allow-daemons it
// runs, and the text, Markdown and JSON reports' context names thermald,
// as the experiment file's meta does (and a `record` recording's). The
// host's firmware facts are said not read under the emulated machine.
func TestDiffDaemons(t *testing.T) {
	dir := t.TempDir()
	script := `cp /bin/sleep ./thermald; ./thermald 60 & d=$!
` + settingsScript + ` > before
"$H" diff performance powersave --runs 2 --warmup 0 -C 0 -o refused.hwpr -- true 2> err; echo "refused $? lines $(wc -l < err)"
` + settingsScript + ` > after; cmp before after && echo unchanged; test -e refused.hwpr || echo "no file"
"$H" diff performance powersave --allow-daemons --runs 2 --warmup 0 -C 0 -o ok.hwpr --json r.json --markdown r.md -- true > report.txt; echo "allowed $?"
"$H" record -C 0 -o rec.hwpr -- true > /dev/null 2>&1; echo "record $?"
echo "thermald $d"; kill $d`
	out, code := emuDiff(t, "mtl-165u", dir, script)
	if code != 0 {
		t.Fatalf("script status %d:\n%s", code, out)
	}
	for _, want := range []string{"refused 2 lines 1\n", "unchanged\n", "no file\n", "allowed 0\n", "record 0\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	pid := regexp.MustCompile(`thermald (\d+)`).FindStringSubmatch(out)
	if pid == nil {
		t.Fatalf("no thermald pid:\n%s", out)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if e := read("err"); !strings.Contains(e, "thermald (pid "+pid[1]+") is running") || !strings.Contains(e, "--allow-daemons") {
		t.Errorf("refusal %q: want thermald's pid %s and --allow-daemons", e, pid[1])
	}
	daemon := "thermald (pid " + pid[1] + "): options 60"
	for name, want := range map[string][]string{
		"report.txt": {"context:\n  power daemons        " + daemon + "; systemd units not read (not read under an emulated machine: the host's units do not write its settings)",
			"  firmware (DMI)       missing (not read under an emulated machine: it would be the host's)\n"},
		"r.md": {"### Context\n", "| power daemons | " + daemon + ";"},
	} {
		got := read(name)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s lacks %q:\n%s", name, w, got)
			}
		}
	}
	var rep struct {
		Contexts []struct {
			Context *recording.Context `json:"context"`
		} `json:"contexts"`
	}
	if err := json.Unmarshal([]byte(read("r.json")), &rep); err != nil || len(rep.Contexts) != 1 || rep.Contexts[0].Context == nil {
		t.Fatalf("r.json contexts: %v %+v", err, rep)
	}
	want := []recording.DaemonState{{Name: "thermald", PID: atoi(t, pid[1]), Unit: "thermald.service",
		Mode: &recording.DaemonMode{What: "options", Fact: recording.Fact{Value: "60"}}}}
	for name, c := range map[string]*recording.Context{"r.json": rep.Contexts[0].Context,
		"ok.hwpr": metaContext(t, filepath.Join(dir, "ok.hwpr")), "rec.hwpr": metaContext(t, filepath.Join(dir, "rec.hwpr"))} {
		if c == nil {
			t.Errorf("%s: no context", name)
			continue
		}
		if d := cmp.Diff(want, c.Daemons.Found); d != "" {
			t.Errorf("%s: daemons (-want +got):\n%s", name, d)
		}
		if c.Microcode.Value != "0x1f" || c.KernelRelease.Value == "" {
			t.Errorf("%s: microcode %+v, kernel %+v; want the emulated 0x1f and the kernel's release", name, c.Microcode, c.KernelRelease)
		}
	}
}

// metaContext reads a recording's meta context.
func metaContext(t *testing.T, path string) *recording.Context {
	t.Helper()
	rec, err := recording.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Meta.Context
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
