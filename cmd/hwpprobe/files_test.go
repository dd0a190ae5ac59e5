// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStreamOverInput: a command whose standard output or standard error
// the shell opened onto one of its inputs (`>> IN`, `1<> IN`, `2>> IN`,
// `2<> IN`: fstat of descriptors 1 and 2 finds it) refuses before reading
// anything, exit 2, and the input is unchanged. The message is one line on
// standard error, and nothing at all when standard error is the input.
func TestStreamOverInput(t *testing.T) {
	dir := t.TempDir()
	rec, exp := recordedInputs(t, dir)
	golden, prof := filepath.Join(dir, "golden.txt"), filepath.Join(dir, "p.toml")
	if err := os.WriteFile(golden, []byte("profile  core type\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prof, []byte(`governor = "performance"`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// stat's inputs: the seed report's kernel build times (docs/diff.md).
	timesA, timesB := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	for f, times := range map[string]string{timesA: "320.96\n335.10\n334.36\n", timesB: "257.89\n258.30\n257.94\n"} {
		if err := os.WriteFile(f, []byte(times), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const (
		appendTo  = os.O_WRONLY | os.O_APPEND // >> FILE
		readWrite = os.O_RDWR                 // 1<> FILE
	)
	tests := []struct {
		name   string
		args   []string
		input  string
		fd     int // 1 or 2
		flag   int
		stderr string // what stderr says when it is not the input
	}{
		{"export >>", []string{"export", rec}, rec, 1, appendTo, "hwpprobe: export: standard output is also an input (" + rec + "); write the output elsewhere\n"},
		{"export parquet 1<>", []string{"export", "--format", "parquet", rec}, rec, 1, readWrite, "hwpprobe: export: standard output is also an input (" + rec + "); write the output elsewhere\n"},
		{"export 2>>", []string{"export", rec}, rec, 2, appendTo, ""},
		{"show >>", []string{"show", rec}, rec, 1, appendTo, "hwpprobe: show: standard output is also an input (" + rec + "); write the output elsewhere\n"},
		{"show 2<>", []string{"show", rec}, rec, 2, readWrite, ""},
		{"diff >>", []string{"diff", exp}, exp, 1, appendTo, "hwpprobe: diff: standard output is also an input (" + exp + "); write the output elsewhere\n"},
		{"report 2>>", []string{"report", exp, "-o", filepath.Join(dir, "exp.html")}, exp, 2, appendTo, ""},
		{"convert 2>>", []string{"convert", rec, filepath.Join(dir, "new.rec")}, rec, 2, appendTo, ""},
		{"matrix --expect >>", []string{"matrix", "performance", "--expect", golden}, golden, 1, appendTo, "hwpprobe: matrix: standard output is also an input (" + golden + "); write the output elsewhere\n"},
		{"matrix @FILE 1<>", []string{"matrix", "@" + prof}, prof, 1, readWrite, "hwpprobe: matrix: standard output is also an input (" + prof + "); write the output elsewhere\n"},
		{"apply @FILE 2>>", []string{"apply", "--dry-run", "@" + prof}, prof, 2, appendTo, ""},
		{"stat >>", []string{"stat", timesA, timesB}, timesB, 1, appendTo, "hwpprobe: stat: standard output is also an input (" + timesB + "); write the output elsewhere\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, err := os.ReadFile(tt.input)
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(tt.input, tt.flag, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var other bytes.Buffer
			cmd := exec.Command(hwpprobeBin, tt.args...)
			if cmd.Stdout, cmd.Stderr = f, &other; tt.fd == 2 {
				cmd.Stdout, cmd.Stderr = &other, f
			}
			cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != exitUsage {
				t.Errorf("exit %d, want 2", code)
			}
			want := tt.stderr
			if tt.fd == 2 {
				want = "" // standard output gets nothing either
			}
			if d := cmp.Diff(want, other.String()); d != "" {
				t.Errorf("the other stream (-want +got):\n%s", d)
			}
			if after, _ := os.ReadFile(tt.input); !bytes.Equal(before, after) {
				t.Errorf("the input changed: %d bytes, was %d", len(after), len(before))
			}
		})
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 6 {
		t.Errorf("%d files in %s, want only the 6 inputs", len(ents), dir)
	}
}

// TestDiffOutputsFirst: diff checks every file it will write before the
// first setting changes: a report that is the experiment file (by any
// name), two reports that are one file, standard output onto an @FILE
// profile (exit 2, bad input), a report or experiment file in a missing
// directory (exit 1, as creating it fails). Each is one line, no run (CMD
// leaves a mark), no file, no journal, the emulated machine unchanged.
func TestDiffOutputsFirst(t *testing.T) {
	cases := []struct {
		name, args, want string
		code             int
	}{
		{"markdown", "-o exp.hwpr --markdown exp.hwpr", "diff: -o exp.hwpr and --markdown exp.hwpr are the same file; give each output its own", 2},
		{"html", "-o exp.hwpr --html ./exp.hwpr", "diff: -o exp.hwpr and --html ./exp.hwpr are the same file", 2},
		{"json", "-o exp.hwpr --json $T/exp.hwpr", "diff: -o exp.hwpr and --json $T/exp.hwpr are the same file", 2},
		{"two", "-o exp.hwpr --markdown r.txt --json r.txt", "diff: --markdown r.txt and --json r.txt are the same file", 2},
		{"jsondir", "-o exp.hwpr --json missing/r.json", "diff: --json missing/r.json cannot be written: no directory missing", 1},
		{"expdir", "-o missing/exp.hwpr", "diff: -o missing/exp.hwpr cannot be written: no directory missing", 1},
		{"stdout", "-o exp.hwpr >> $T/a.toml", "diff: standard output is also an input (a.toml); write the output elsewhere", 2},
	}
	script := "cd $T && echo 'governor = \"performance\"' > a.toml\nD before\n"
	for _, c := range cases {
		// @a.toml: a profile file, read as an input.
		script += "$H diff @a.toml powersave --runs 1 --warmup 0 --force " + c.args + " -- touch ran-" + c.name + " 2> err-" + c.name + "; echo \"" + c.name + " $?\" >> codes\n"
	}
	script += "D after\n"
	out, dir := emuScript(t, "mtl-165u", script)
	got := codes(t, dir)
	for _, c := range cases {
		b, _ := os.ReadFile(filepath.Join(dir, "err-"+c.name))
		want := "hwpprobe: " + strings.ReplaceAll(c.want, "$T", dir)
		if got[c.name] != strconv.Itoa(c.code) || strings.Count(string(b), "\n") != 1 || !strings.HasPrefix(string(b), want) {
			t.Errorf("%s: exit %s, stderr %q; want %d and one line starting %q", c.name, got[c.name], b, c.code, want)
		}
		if _, err := os.Stat(filepath.Join(dir, "ran-"+c.name)); err == nil {
			t.Errorf("%s: the experiment ran", c.name)
		}
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "err-") {
			names = append(names, e.Name())
		}
	}
	if d := cmp.Diff([]string{"a.toml", "after.json", "before.json", "codes"}, names); d != "" {
		t.Errorf("files left (-want +got):\n%s\n%s", d, out)
	}
	if d := cmp.Diff(readDump(t, dir, "before"), readDump(t, dir, "after")); d != "" {
		t.Errorf("the machine changed:\n%s", d)
	}
}
