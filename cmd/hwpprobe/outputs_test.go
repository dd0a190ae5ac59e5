// SPDX-License-Identifier: Apache-2.0

package main

import (
	"github.com/hwpprobe/hwpprobe/internal/emu/emutest"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/testexp"
)

// spelling is one way to ask for outputs: the arguments, and the files
// they write (by the names the comparison uses).
type spelling struct {
	args  []string
	files map[string]string // name -> path
}

// sameOutputs runs each spelling and checks that all write the same
// standard output, exit status and files, byte for byte; it returns the
// first spelling's outputs (stdout under "stdout").
func sameOutputs(t *testing.T, spellings []spelling) map[string]string {
	t.Helper()
	var first map[string]string
	for _, s := range spellings {
		stdout, stderr, code := runBin(t, s.args...)
		got := map[string]string{"stdout": stdout, "code": string(rune('0' + code))}
		for name, path := range s.files {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%q: %v (stderr %q)", s.args, err, stderr)
			}
			got[name] = string(b)
		}
		if first == nil {
			first = got
			continue
		}
		if d := cmp.Diff(first, got); d != "" {
			t.Errorf("%q writes other bytes than %q (-first +this):\n%s", s.args, spellings[0].args, d)
		}
	}
	return first
}

// TestOutputSpellings: --format and -o [FORMAT=]FILE write exactly the
// bytes the older spellings (--json, --markdown FILE, --ktap, --junit
// FILE ...) write, and the JSON is valid by its schema.
func TestOutputSpellings(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	t.Run("snapshot", func(t *testing.T) {
		root, _ := emutest.Root(t, "mtl-165u")
		out := sameOutputs(t, []spelling{
			{args: []string{"--root", root, "snapshot", "-C", "12-13", "--json"}},
			{args: []string{"--root", root, "snapshot", "-C", "12-13", "--format", "json"}},
		})
		checkSchema(t, "hwpprobe-snapshot/1", []byte(out["stdout"]))
		// -o FILE writes to the file what --format writes to stdout.
		text := sameOutputs(t, []spelling{{args: []string{"--root", root, "snapshot", "-C", "12-13"}}})
		files := sameOutputs(t, []spelling{{args: []string{"--root", root, "snapshot", "-C", "12-13", "-o", at("s.json"), "-o", "text=" + at("s")},
			files: map[string]string{"json": at("s.json"), "text": at("s")}}})
		if d := cmp.Diff(map[string]string{"json": out["stdout"], "text": text["stdout"], "stdout": text["stdout"], "code": "0"}, files); d != "" {
			t.Errorf("-o files (-want +got):\n%s", d)
		}
	})
	t.Run("diff", func(t *testing.T) {
		exp := writeExperiment(t, dir, "exp.hwpr", testexp.Seed())
		out := sameOutputs(t, []spelling{
			{args: []string{"diff", exp, "--markdown", at("a.md"), "--json", at("a.json"), "--html", at("a.html")},
				files: map[string]string{"md": at("a.md"), "json": at("a.json"), "html": at("a.html")}},
			{args: []string{"diff", exp, "-o", at("b.md"), "-o", "json=" + at("b"), "--output", at("b.html")},
				files: map[string]string{"md": at("b.md"), "json": at("b"), "html": at("b.html")}},
		})
		checkSchema(t, "hwpprobe-diff/1", []byte(out["json"]))
		failIf := []string{"--fail-if", "B slower than A by 5%", "--fail-if", "B faster than A by 5%"}
		out = sameOutputs(t, []spelling{
			{args: append([]string{"diff", exp, "--ktap", "--junit", at("a.xml")}, failIf...), files: map[string]string{"junit": at("a.xml")}},
			{args: append([]string{"diff", exp, "--format", "ktap", "-o", at("b.xml")}, failIf...), files: map[string]string{"junit": at("b.xml")}},
			{args: append([]string{"diff", exp, "--format", "ktap", "-o", "junit=" + at("c.junit")}, failIf...), files: map[string]string{"junit": at("c.junit")}},
		})
		if out["code"] != "3" || out["stdout"][:15] != "KTAP version 1\n" {
			t.Errorf("want KTAP and exit 3, got %s:\n%s", out["code"], out["stdout"])
		}
	})
	t.Run("usage", func(t *testing.T) {
		exp := writeExperiment(t, dir, "exp2.hwpr", testexp.Seed())
		for _, args := range [][]string{
			{"diff", exp, "--format", "json"},                    // not printed by diff
			{"diff", exp, "-o", "csv=" + at("x")},                // not written by diff
			{"diff", exp, "-o", at("x.json"), "--json", at("y")}, // two JSON files
			{"snapshot", "-o", at("x.hwpr")},                     // no main file, no format
			{"snapshot", "--json", "--format", "text"},           // contradiction
			{"conform", "--format", "text"},                      // KTAP only
			{"trace", "-o", at("t.json")},                        // standard output only
		} {
			stdout, stderr, code := runBin(t, args...)
			if code != exitUsage || stdout != "" {
				t.Errorf("%q: exit %d, stdout %q; want %d and nothing", args, code, stdout, exitUsage)
			}
			oneLineNaming(t, "bad outputs", stderr, "hwpprobe: ")
		}
		if entries, _ := filepath.Glob(at("[xyt]*")); len(entries) > 0 {
			t.Errorf("a usage error left files: %v", entries)
		}
	})
}

// TestMatrixOutputSpellings: under the emulated laptop, matrix --format
// json and --format ktap -o FILE.xml write the bytes --json and --ktap
// --junit FILE write; -o json=FILE beside the KTAP is the table's JSON.
func TestMatrixOutputSpellings(t *testing.T) {
	out, dir := emuScript(t, "mtl-165u", `cd $T
$H matrix --ignore-daemons performance powersave:epp=power > m.txt
sed '3s/0/1/' m.txt > changed.txt
M="$H matrix --ignore-daemons --expect changed.txt performance powersave:epp=power"
$H matrix --ignore-daemons --json performance powersave:epp=power > a.json; echo "a.json $?" >> codes
$H matrix --ignore-daemons --format json performance powersave:epp=power > b.json; echo "b.json $?" >> codes
$M --ktap --junit a.xml > a.ktap 2> a.err; echo "a.ktap $?" >> codes
$M --format ktap -o b.xml > b.ktap 2> b.err; echo "b.ktap $?" >> codes
$M --format ktap -o junit=c.junit -o json=c.json > c.ktap 2> c.err; echo "c.ktap $?" >> codes`)
	if d := cmp.Diff(map[string]string{"a.json": "0", "b.json": "0", "a.ktap": "1", "b.ktap": "1", "c.ktap": "1"}, codes(t, dir)); d != "" {
		t.Fatalf("exit statuses (-want +got):\n%s\n%s", d, out)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	checkSchema(t, "hwpprobe-matrix/1", []byte(read("a.json")))
	for _, p := range [][2]string{{"a.json", "b.json"}, {"a.ktap", "b.ktap"}, {"a.ktap", "c.ktap"}, {"a.xml", "b.xml"}, {"a.xml", "c.junit"}, {"a.err", "b.err"}, {"a.json", "c.json"}} {
		if d := cmp.Diff(read(p[0]), read(p[1])); d != "" {
			t.Errorf("%s and %s differ (-old +new):\n%s", p[0], p[1], d)
		}
	}
}
