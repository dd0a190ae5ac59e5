// SPDX-License-Identifier: Apache-2.0

// Package iocheck checks, before a command reads or changes anything,
// what it will write against what it reads: no output file and no
// standard stream it writes may be one of its input files, no two
// outputs may be the same file, and every output's directory must exist
// and be writable. Files are compared by device and inode, so the same
// path, another spelling of it, a hard link, a symbolic link and a
// descriptor the shell opened (`>> FILE`, `1<> FILE`, `2> FILE`, which
// fstat sees) are all the same file.
//
// Only regular files are compared: writing to a terminal, a pipe or
// /dev/null (an output `/dev/stdout` on a terminal, say) destroys
// nothing.
package iocheck

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Errors Check returns (wrapped).
var (
	// ErrIsInput: an output file or stream is one of the inputs.
	ErrIsInput = errors.New("is also an input")
	// ErrSameOutput: two outputs are the same file.
	ErrSameOutput = errors.New("are the same file; give each output its own")
	// ErrUnwritable: an output's directory is missing or not writable,
	// or the output is a directory. Unlike the others it is not a
	// conflict between the command's own arguments: commands report it as
	// a failure to create the output.
	ErrUnwritable = errors.New("cannot be written")
)

// Output is a file a command writes.
type Output struct {
	// Name says which option gives it, for messages: "-o", "--json";
	// "" for an argument.
	Name string
	// Path is the file; "" is no output (the option was not given).
	Path string
	// MakeDirs: the command creates Path's missing parent directories
	// (report --png), so the nearest existing one must be writable.
	MakeDirs bool
}

// Stream is a descriptor a command writes, such as standard output.
type Stream struct {
	Name string // "standard output"
	File *os.File
}

// Set is what a command reads and writes.
type Set struct {
	// Inputs are the files read. A path that does not exist (or cannot
	// be looked at) is left out: reading it reports that.
	Inputs  []string
	Outputs []Output
	Streams []Stream
}

// Stdout is the process's standard output (descriptor 1), for a command
// that writes it.
func Stdout() Stream { return Stream{"standard output", os.Stdout} }

// Stderr is the process's standard error (descriptor 2), for a command
// that writes it.
func Stderr() Stream { return Stream{"standard error", os.Stderr} }

// id identifies a file: an existing one by device and inode, one not yet
// created by its directory's device and inode and its name there.
type id struct {
	dev, ino uint64
	name     string
}

// written is an output or stream with its identity.
type written struct {
	what string // "-o out.csv", "standard output"
	id   id
	ok   bool // id is known (a regular file, or a file to be created)
}

// Check returns the first conflict in s: an output that cannot be
// written (its directory is missing, not a directory or not writable; it
// is a directory), an output or stream that is an input (ErrIsInput), or
// two outputs, or an output and a stream, that are the same file
// (ErrSameOutput). Two streams may be the same file (`> log 2>&1`).
func Check(s Set) error {
	inputs := map[id]string{}
	for _, p := range s.Inputs {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			inputs[fileID(st)] = p
		}
	}
	var outs []written
	for _, o := range s.Outputs {
		if o.Path == "" {
			continue
		}
		w, err := output(o)
		if err != nil {
			return err
		}
		outs = append(outs, w)
	}
	all := slices.Clone(outs) // the outputs, then the streams
	for _, st := range s.Streams {
		w := written{what: st.Name}
		if fi, err := st.File.Stat(); err == nil && fi.Mode().IsRegular() {
			w.id, w.ok = fileID(fi), true
		}
		all = append(all, w)
	}
	for _, w := range all {
		if in, ok := inputs[w.id]; ok && w.ok {
			return fmt.Errorf("%s %w (%s); write the output elsewhere", w.what, ErrIsInput, in)
		}
	}
	for i, a := range outs {
		for _, b := range all[i+1:] {
			if a.ok && b.ok && a.id == b.id {
				return fmt.Errorf("%s and %s %w", a.what, b.what, ErrSameOutput)
			}
		}
	}
	return nil
}

// output checks that o can be written and returns its identity.
func output(o Output) (written, error) {
	w := written{what: strings.TrimPrefix(o.Name+" "+o.Path, " ")}
	unwritable := func(format string, a ...any) (written, error) {
		return w, fmt.Errorf("%s %w: %s", w.what, ErrUnwritable, fmt.Sprintf(format, a...))
	}
	st, err := os.Stat(o.Path)
	switch {
	case err == nil && st.IsDir():
		return unwritable("it is a directory")
	case err == nil && !st.Mode().IsRegular():
		return w, nil // a terminal, a pipe, /dev/null: written in place
	case err == nil:
		w.id, w.ok = fileID(st), true
		// A symbolic link's target is what gets replaced, in its
		// directory.
		real, err := filepath.EvalSymlinks(o.Path)
		if err != nil {
			return unwritable("%v", err)
		}
		return w, writableDir(w.what, filepath.Dir(real), false)
	case !missing(err):
		return unwritable("%v", err)
	}
	dir := filepath.Dir(o.Path)
	if err := writableDir(w.what, dir, o.MakeDirs); err != nil {
		return w, err
	}
	if dst, err := os.Stat(dir); err == nil {
		w.id, w.ok = fileID(dst), true
		w.id.name = filepath.Base(o.Path)
	}
	return w, nil
}

// writableDir returns why files cannot be created in dir (or, with
// makeDirs, in its nearest existing ancestor), or nil.
func writableDir(what, dir string, makeDirs bool) error {
	for {
		st, err := os.Stat(dir)
		switch {
		case missing(err) && makeDirs && filepath.Dir(dir) != dir:
			dir = filepath.Dir(dir)
			continue
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("%s %w: no directory %s", what, ErrUnwritable, dir)
		case errors.Is(err, unix.ENOTDIR):
			return fmt.Errorf("%s %w: %s is under a file, not a directory", what, ErrUnwritable, dir)
		case err != nil:
			return fmt.Errorf("%s %w: %w", what, ErrUnwritable, err)
		case !st.IsDir():
			return fmt.Errorf("%s %w: %s is not a directory", what, ErrUnwritable, dir)
		}
		if err := unix.Access(dir, unix.W_OK|unix.X_OK); err != nil {
			return fmt.Errorf("%s %w: directory %s: %w", what, ErrUnwritable, dir, err)
		}
		return nil
	}
}

// missing reports whether err says a path does not exist: no such file,
// or a file where the path needs a directory (ENOTDIR).
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR)
}

func fileID(st fs.FileInfo) id {
	s := st.Sys().(*syscall.Stat_t)
	return id{dev: uint64(s.Dev), ino: s.Ino}
}
