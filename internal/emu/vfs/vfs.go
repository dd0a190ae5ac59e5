// SPDX-License-Identifier: Apache-2.0

// Package vfs is the in-memory file tree an emulated machine presents:
// directories, text files with read and write behaviour, devices that answer
// each offset on their own (/dev/cpu/N/msr, /dev/cpu/N/cpuid), and symbolic
// links. The emulator (package emu) builds the tree; a server (FUSE, or a
// plain directory) exposes it. Errors meant for the reader are
// syscall.Errno values (EIO, EBUSY, EINVAL, EACCES) so a server can hand
// them to the kernel unchanged.
package vfs

import (
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// Node is a *Dir, *File, *Device or *Symlink.
type Node interface{ isNode() }

// Dir is a directory. It is safe for concurrent use.
type Dir struct {
	mu       sync.RWMutex
	children map[string]Node
}

// File is a regular file whose content is produced on each read (sysfs
// semantics: a read returns the current value) and whose writes, if Write or
// WriteBy is set, are applied whole.
type File struct {
	Mode  os.FileMode // permission bits; 0444 or 0644 typically
	Read  func() ([]byte, error)
	Write func(data []byte) error // nil (and WriteBy nil): read-only
	// WriteBy, when set, is used instead of Write by servers that know
	// which process writes (Store).
	WriteBy func(by Caller, data []byte) error
}

// Caller is the process a write comes from, as the server knows it (the
// FUSE request header gives the writing thread; the server resolves its
// thread group and command name).
type Caller struct {
	PID  int    // thread group id (the process); 0 when unknown
	Comm string // the writing thread's command name; "" when unknown
}

// Writable reports whether the file accepts writes.
func (f *File) Writable() bool { return f.Write != nil || f.WriteBy != nil }

// Store applies one write from by: WriteBy when set, else Write. A file
// that is not Writable refuses with EACCES.
func (f *File) Store(by Caller, data []byte) error {
	switch {
	case f.WriteBy != nil:
		return f.WriteBy(by, data)
	case f.Write != nil:
		return f.Write(data)
	}
	return syscall.EACCES
}

// Device is a character-device-like file read at arbitrary offsets, each
// read answered on its own (no caching, no read-ahead): an MSR device
// answers an 8-byte read at offset = MSR number.
type Device struct {
	Mode   os.FileMode
	ReadAt func(p []byte, off int64) (int, error)
}

// Symlink is a symbolic link.
type Symlink struct{ Target string }

func (*Dir) isNode()     {}
func (*File) isNode()    {}
func (*Device) isNode()  {}
func (*Symlink) isNode() {}

// NewDir returns an empty directory.
func NewDir() *Dir { return &Dir{children: map[string]Node{}} }

// Lookup returns the child called name.
func (d *Dir) Lookup(name string) (Node, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	n, ok := d.children[name]
	return n, ok
}

// Names returns the children's names, sorted.
func (d *Dir) Names() []string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	names := make([]string, 0, len(d.children))
	for n := range d.children {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Set adds or replaces the child called name.
func (d *Dir) Set(name string, n Node) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.children[name] = n
}

// MkdirAll returns the directory at the slash-separated path p below d,
// creating missing directories. It panics if a path element is not a
// directory: trees are built by code, so that is a programming error.
func (d *Dir) MkdirAll(p string) *Dir {
	cur := d
	for _, el := range strings.Split(strings.Trim(path.Clean("/"+p), "/"), "/") {
		if el == "" {
			continue
		}
		cur.mu.Lock()
		n, ok := cur.children[el]
		if !ok {
			n = NewDir()
			cur.children[el] = n
		}
		cur.mu.Unlock()
		next, isDir := n.(*Dir)
		if !isDir {
			panic(fmt.Sprintf("vfs: %s: %q is not a directory", p, el))
		}
		cur = next
	}
	return cur
}

// Put places n at the slash-separated path p below d, creating parents.
func (d *Dir) Put(p string, n Node) {
	dir, name := path.Split(path.Clean("/" + p))
	d.MkdirAll(dir).Set(name, n)
}

// Walk resolves a slash-separated path below d without following symbolic
// links. It returns false if any element is missing.
func (d *Dir) Walk(p string) (Node, bool) {
	var cur Node = d
	for _, el := range strings.Split(strings.Trim(path.Clean("/"+p), "/"), "/") {
		if el == "" {
			continue
		}
		dir, ok := cur.(*Dir)
		if !ok {
			return nil, false
		}
		if cur, ok = dir.Lookup(el); !ok {
			return nil, false
		}
	}
	return cur, true
}

// Text returns a read-only File whose content is produced by f, with a
// trailing newline added as sysfs does.
func Text(f func() string) *File {
	return &File{Mode: 0o444, Read: func() ([]byte, error) { return []byte(f() + "\n"), nil }}
}

// Const returns a read-only File holding s and a newline.
func Const(s string) *File { return Text(func() string { return s }) }
