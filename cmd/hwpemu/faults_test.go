package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/sigquit/quittest"
)

// TestQuitEarly: SIGQUIT at any moment from hwpemu's first package
// initializations on (0 to 15 ms after package sigquit's init) ends run,
// serve and list with 131 (list may be done before: 0), never with the
// Go runtime's goroutine dump and status 2 (issue 21, fault 7).
func TestQuitEarly(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		argv []string
		want []int
	}{
		{[]string{"run", "vm-bare", "--", "sleep", "30"}, []int{131}},
		{[]string{"serve", "vm-bare", dir}, []int{131}},
		{[]string{"list"}, []int{0, 131}},
	} {
		t.Run(tc.argv[0], func(t *testing.T) {
			for _, r := range quittest.Loop(t, filepath.Join(binDir, "hwpemu"), tc.argv, 16, 1) {
				if !slices.Contains(tc.want, r.Status) || strings.Contains(r.Stderr, "goroutine ") {
					t.Errorf("SIGQUIT %v after sigquit's init: status %d, want one of %v; stderr:\n%.1000s", r.After, r.Status, tc.want, r.Stderr)
				}
			}
		})
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("serve left %d entries in %s: still mounted?", len(ents), dir)
	}
}

// descTiny is a small valid description; the cases below change it.
const descTiny = `name: tiny
vendor: GenuineIntel
family: 6
model: 0xAA
tsc_mhz: 1000
bus_mhz: 100
packages: 1
cores:
  - {type: c, count: 2, threads: 1}
core_types:
  c: {}
msrs:
  - {msr: 0x10, name: TSC, kind: tsc, source: model}
`

// TestDescriptionRefused: a description whose name carries an escape
// sequence, whose power figure is infinite, or whose file path holds a
// NUL is one escaped line and exit 2 (it used to run, printing the name
// raw in the banner; issue 21, fault 12).
func TestDescriptionRefused(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, data, want string }{
		{"escape in the name", strings.Replace(descTiny, "name: tiny", `name: "\e]2;pwned\a\e[2J"`, 1),
			`:1: name: "\x1b]2;pwned\a\x1b[2J": want printable text (no control characters or escape sequences)`},
		{"infinite power", descTiny + "power: {idle_w: .inf}\n",
			":14: power.idle_w: +Inf: want a finite number from 0 to 10000"},
		{"NUL in a path", descTiny + "files:\n  - {path: \"proc/cpuinfo\\0x\", mode: \"0444\", content: \"x\\n\"}\n",
			`:15: files[0].path: "proc/cpuinfo\x00x": contains a NUL byte, which no file name can`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".yaml")
			if err := os.WriteFile(file, []byte(tc.data), 0o644); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code := runEmu(t, "run", file, "--", "true")
			got := []any{code, stdout, stderr}
			want := []any{2, "", "hwpemu: " + file + tc.want + "\n"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("hwpemu run (-want +got: status, stdout, stderr):\n%s", diff)
			}
		})
	}
}
