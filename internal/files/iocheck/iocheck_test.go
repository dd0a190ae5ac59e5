// SPDX-License-Identifier: Apache-2.0

package iocheck

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestCheck: every way an output or a stream can be an input or another
// output is refused with its error, and outputs that cannot be written
// are found; distinct files, streams shared with each other and
// non-regular files pass.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.rec")
	other := filepath.Join(dir, "other.rec")
	for _, p := range []string{in, other} {
		if err := os.WriteFile(p, []byte("recording"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hard, sym, file := filepath.Join(dir, "hard.rec"), filepath.Join(dir, "sym.rec"), filepath.Join(dir, "file")
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("in.rec", sym); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Symlink(".", sub); err != nil {
		t.Fatal(err)
	}
	open := func(path string, flag int) Stream {
		f, err := os.OpenFile(path, flag, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return Stream{"standard output", f}
	}
	out := func(name, path string) Output { return Output{Name: name, Path: path} }
	tests := []struct {
		name string
		set  Set
		want error // nil: accepted
	}{
		{"distinct", Set{Inputs: []string{in}, Outputs: []Output{out("-o", filepath.Join(dir, "x.csv"))}}, nil},
		{"no output given", Set{Inputs: []string{in}, Outputs: []Output{out("-o", "")}}, nil},
		{"missing input", Set{Inputs: []string{filepath.Join(dir, "none")}, Outputs: []Output{out("-o", filepath.Join(dir, "none"))}}, nil},
		{"same path", Set{Inputs: []string{in}, Outputs: []Output{out("-o", in)}}, ErrIsInput},
		{"other spelling", Set{Inputs: []string{in}, Outputs: []Output{out("-o", dir+"/./in.rec")}}, ErrIsInput},
		{"hard link", Set{Inputs: []string{in}, Outputs: []Output{out("-o", hard)}}, ErrIsInput},
		{"symbolic link", Set{Inputs: []string{sym}, Outputs: []Output{out("-o", in)}}, ErrIsInput},
		{"second input", Set{Inputs: []string{other, in}, Outputs: []Output{out("-o", hard)}}, ErrIsInput},
		{"stdout appends to input", Set{Inputs: []string{in}, Streams: []Stream{open(in, os.O_WRONLY|os.O_APPEND)}}, ErrIsInput},
		{"stdout read-write on input", Set{Inputs: []string{in}, Streams: []Stream{open(hard, os.O_RDWR)}}, ErrIsInput},
		{"stdout elsewhere", Set{Inputs: []string{in}, Streams: []Stream{open(other, os.O_WRONLY|os.O_APPEND)}}, nil},
		{"stdout to /dev/null", Set{Inputs: []string{"/dev/null"}, Streams: []Stream{open("/dev/null", os.O_WRONLY)}}, nil},
		{"streams share a file", Set{Inputs: []string{in}, Streams: []Stream{open(other, os.O_WRONLY), open(other, os.O_WRONLY)}}, nil},
		{"output is a stream", Set{Inputs: []string{in}, Outputs: []Output{out("--json", other)}, Streams: []Stream{open(other, os.O_WRONLY|os.O_APPEND)}}, ErrSameOutput},
		{"two outputs", Set{Outputs: []Output{out("--markdown", filepath.Join(dir, "r.md")), out("-o", filepath.Join(sub, "r.md"))}}, ErrSameOutput},
		{"two existing outputs", Set{Outputs: []Output{out("--markdown", other), out("--json", dir+"//other.rec")}}, ErrSameOutput},
		{"two /dev/null outputs", Set{Outputs: []Output{out("--markdown", "/dev/null"), out("--json", "/dev/null")}}, nil},
		{"missing directory", Set{Outputs: []Output{out("--json", filepath.Join(dir, "no", "r.json"))}}, ErrUnwritable},
		{"directory is a file", Set{Outputs: []Output{out("--json", filepath.Join(file, "r.json"))}}, ErrUnwritable},
		{"output is a directory", Set{Outputs: []Output{out("-o", dir)}}, ErrUnwritable},
		{"missing directories made", Set{Outputs: []Output{{Name: "--png", Path: filepath.Join(dir, "a", "b", "mhz.png"), MakeDirs: true}}}, nil},
		{"made under a file", Set{Outputs: []Output{{Name: "--png", Path: filepath.Join(file, "b", "mhz.png"), MakeDirs: true}}}, ErrUnwritable},
	}
	for _, tt := range tests {
		err := Check(tt.set)
		if (tt.want == nil) != (err == nil) || (tt.want != nil && !errors.Is(err, tt.want)) {
			t.Errorf("%s: %v; want %v", tt.name, err, tt.want)
		}
	}
}
