// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
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

// descTiny is a small valid description (emu's testdata/tiny.yaml); the
// cases below change it.
var descTiny = func() string {
	b, err := os.ReadFile("../../internal/emu/testdata/tiny.yaml")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

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

// TestPrivateRunHwpprobe: each session has its own /run/hwpprobe, empty
// at start, and the rest of the host's /run: what one session keeps
// there (apply's journal) is seen neither by another session nor on the
// host (issue 21, fault 14).
func TestPrivateRunHwpprobe(t *testing.T) {
	name := fmt.Sprintf("hwpemu-test-%d", os.Getpid())
	onHost := filepath.Join("/run/hwpprobe", name)
	t.Cleanup(func() { os.Remove(onHost) }) // only there without the fix
	a := emuCmd("run", "vm-bare", "--", "sh", "-c", "echo A > /run/hwpprobe/"+name+" && echo ready && exec sleep 600")
	out, err := a.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Process.Signal(syscall.SIGTERM); a.Wait() })
	if line, err := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		t.Fatalf("session A: %q %v", line, err)
	}
	type view struct {
		Private string   // ls -A /run/hwpprobe in session B
		Run     []string // ls -A /run in session B
		OnHost  bool     // session A's file in the host's /run/hwpprobe
	}
	var want view
	ents, err := os.ReadDir("/run")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		want.Run = append(want.Run, e.Name())
	}
	if !slices.Contains(want.Run, "hwpprobe") {
		want.Run = append(want.Run, "hwpprobe")
		slices.Sort(want.Run)
	}
	b := inMachine(t, "vm-bare", "ls -A /run/hwpprobe; echo --; ls -A /run | LC_ALL=C sort")
	private, run, _ := strings.Cut(b, "--\n")
	got := view{Private: private, Run: strings.Fields(run)}
	_, err = os.Stat(onHost)
	got.OnHost = err == nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("while session A keeps %s in its /run/hwpprobe (-want +got):\n%s", name, diff)
	}
}
