// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// v1Fixtures and v2Fixtures are recordings written by the last hwpprobe
// that wrote format 1.0 and 2.x, next to what its show and export (and
// diff, for an experiment) printed for them.
const (
	v1Fixtures = "../../internal/files/recording/testdata/v1"
	v2Fixtures = "../../internal/files/recording/testdata/v2"
)

// TestFixtures: show and export (and diff) print byte for byte what the
// version that wrote the files printed.
func TestFixtures(t *testing.T) {
	for _, dir := range []string{v1Fixtures, v2Fixtures} {
		recs, err := filepath.Glob(filepath.Join(dir, "*.rec"))
		if err != nil || len(recs) == 0 {
			t.Fatalf("no fixtures in %s: %v", dir, err)
		}
		for _, rec := range recs {
			t.Run(filepath.Base(dir)+"/"+filepath.Base(rec), func(t *testing.T) { checkFixtureOutput(t, rec, strings.TrimSuffix(rec, ".rec")) })
		}
	}
}

// checkFixtureOutput runs show and export on rec and compares their
// standard output with golden+".show" and golden+".csv", and diff's with
// golden+".diff" where that exists.
func checkFixtureOutput(t *testing.T, rec, golden string) {
	t.Helper()
	for _, c := range []struct {
		args []string
		ext  string
	}{
		{[]string{"show", rec}, ".show"},
		{[]string{"export", "--csv", rec}, ".csv"},
		{[]string{"diff", rec}, ".diff"},
	} {
		want, err := os.ReadFile(golden + c.ext)
		if c.ext == ".diff" && errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := runBin(t, c.args...)
		if code != 0 {
			t.Errorf("hwpprobe %v: exit %d, stderr %q", c.args, code, stderr)
		}
		if diff := cmp.Diff(string(want), stdout); diff != "" {
			t.Errorf("hwpprobe %v (-want +got):\n%s", c.args, diff)
		}
	}
}

// TestShowExportCorrupt: a damaged file (a flipped byte, a zero-filled
// tail, endless zeros on a pipe) makes show and export print what they
// read before the damage and exit 1, in both format versions.
func TestShowExportCorrupt(t *testing.T) {
	dir := t.TempDir()
	v2 := filepath.Join(dir, "v2.rec")
	if _, stderr, code := runBin(t, "record", "--no-trace", "-o", v2, "--", "true"); code != 0 {
		t.Fatalf("record: %d %s", code, stderr)
	}
	for _, src := range []string{filepath.Join(v1Fixtures, "emu-mtl.rec"), v2} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		flipped := bytes.Clone(b)
		flipped[len(b)*2/3] ^= 0x10
		zeroTail := append(bytes.Clone(b[:len(b)/2]), make([]byte, 1<<20)...)
		for name, content := range map[string][]byte{"flipped": flipped, "zero-tail": zeroTail} {
			path := filepath.Join(dir, name+".rec")
			if err := os.WriteFile(path, content, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"show", path}, {"export", "--csv", path}} {
				stdout, stderr, code := runBin(t, args...)
				if code != 1 || !strings.Contains(stderr, "recording is corrupt") || !strings.Contains(stdout, "\n") {
					t.Errorf("%s %v: exit %d, stderr %q, %d bytes of output", filepath.Base(src), args, code, stderr, len(stdout))
				}
			}
		}
		for _, cut := range []int{482, len(b) / 3} {
			stdin := io.MultiReader(bytes.NewReader(b[:cut]), zeros{})
			_, stderr, code := runBinStdin(t, stdin, "show", "/dev/stdin")
			if code != 1 || !strings.Contains(stderr, "recording is corrupt") {
				t.Errorf("%s cut at %d, then endless zeros: exit %d, stderr %q", filepath.Base(src), cut, code, stderr)
			}
		}
	}
}

// zeros reads zero bytes forever, as /dev/zero.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// runBinStdin is runBin with standard input from r, ended after a minute
// (a reader that does not stop at the damage would read zeros forever).
func runBinStdin(t *testing.T, r io.Reader, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, hwpprobeBin, args...)
	var o, e stringsBuilder
	cmd.Stdin, cmd.Stdout, cmd.Stderr = r, &o, &e
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("hwpprobe %v did not end within a minute", args)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	return o.String(), e.String(), code
}

// TestConvertFixtures: a 1.0 or 2.x recording converted to the current
// version shows and exports byte for byte as before (a cut one up to its
// file: line, which now says the end record is missing), and is smaller.
func TestConvertFixtures(t *testing.T) {
	for _, src := range []string{v1Fixtures, v2Fixtures} {
		recs, _ := filepath.Glob(filepath.Join(src, "*.rec"))
		dir := t.TempDir()
		for _, rec := range recs {
			name := filepath.Base(src) + "/" + filepath.Base(rec)
			out := filepath.Join(dir, filepath.Base(rec))
			_, stderr, code := runBin(t, "convert", rec, out)
			cut := strings.HasSuffix(name, "-cut.rec")
			if code != 0 || cut != strings.Contains(stderr, "truncated") {
				t.Fatalf("convert %s: exit %d, stderr %q", name, code, stderr)
			}
			if old, converted := fileSize(t, rec), fileSize(t, out); converted >= old && src == v1Fixtures {
				t.Errorf("%s: %d bytes converted from %d", name, converted, old)
			}
			golden := strings.TrimSuffix(rec, ".rec")
			if !cut {
				checkFixtureOutput(t, out, golden)
				continue
			}
			checkCutConverted(t, name, out, golden)
		}
	}
}

// checkCutConverted compares show's output for out, the conversion of a
// cut fixture, with the fixture's but for the file: line, which must say
// that the end record is missing.
func checkCutConverted(t *testing.T, name, out, golden string) {
	t.Helper()
	want, _ := os.ReadFile(golden + ".show")
	stdout, _, _ := runBin(t, "show", out)
	dropFile := func(s string) string {
		var keep []string
		for _, l := range strings.Split(s, "\n") {
			if !strings.HasPrefix(l, "file:") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	if diff := cmp.Diff(dropFile(string(want)), dropFile(stdout)); diff != "" || !strings.Contains(stdout, "file:     incomplete: no end record") {
		t.Errorf("show %s converted (-want +got):\n%s%s", name, diff, stdout)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// TestConvertNeverOverInput: convert refuses to write over its input by
// any name (exit 2), and a damaged input leaves no output (exit 1).
func TestConvertNeverOverInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.rec")
	orig, err := os.ReadFile(filepath.Join(v1Fixtures, "synthetic-2runs.rec"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(in, orig, 0o644)
	os.Link(in, filepath.Join(dir, "hard.rec"))
	os.Symlink("in.rec", filepath.Join(dir, "soft.rec"))
	for _, out := range []string{in, filepath.Join(dir, "hard.rec"), filepath.Join(dir, "soft.rec"), filepath.Join(dir, ".", "in.rec")} {
		if _, stderr, code := runBin(t, "convert", in, out); code != 2 || !strings.Contains(stderr, "is also an input") {
			t.Errorf("convert in.rec %s: exit %d, stderr %q", out, code, stderr)
		}
	}
	if b, _ := os.ReadFile(in); !bytes.Equal(b, orig) {
		t.Error("the input changed")
	}
	bad := bytes.Clone(orig)
	bad[len(bad)/2] ^= 1
	os.WriteFile(in, bad, 0o644)
	out := filepath.Join(dir, "out.rec")
	if _, stderr, code := runBin(t, "convert", in, out); code != 1 || !strings.Contains(stderr, "recording is corrupt") {
		t.Errorf("convert of a damaged file: exit %d, stderr %q", code, stderr)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*out.rec*")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	if _, stderr, code := runBin(t, "convert", in); code != 2 {
		t.Errorf("convert with one argument: exit %d, stderr %q", code, stderr)
	}
}

// TestExportFromPipe: export reads a recording from a pipe (read whole,
// once) as it reads a file (scanned twice).
func TestExportFromPipe(t *testing.T) {
	rec := filepath.Join(v1Fixtures, "synthetic-2runs.rec")
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(strings.TrimSuffix(rec, ".rec") + ".csv")
	stdout, stderr, code := runBinStdin(t, bytes.NewReader(b), "export", "--csv", "/dev/stdin")
	if code != 0 || stdout != string(want) {
		t.Errorf("export from a pipe: exit %d, stderr %q, output (-want +got):\n%s", code, stderr, cmp.Diff(string(want), stdout))
	}
}
