// SPDX-License-Identifier: Apache-2.0

// Package atomicfile writes output files so that a failure never leaves a
// half-written or empty one and no command writes over its own input: the
// data goes to a temporary name in the output's directory, is synced, and
// is renamed to the output's name only when complete (or, for a file
// written as it goes, once its first part is written).
package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Errors Create and Publish return (wrapped).
var (
	// ErrSameFile: the output is one of the command's inputs (the same
	// file by device and inode: the same path, a hard link or a symbolic
	// link to it).
	ErrSameFile = errors.New("is also an input; write the output elsewhere")
	// ErrExists: the output exists and replacing it was not asked for.
	ErrExists = errors.New("exists")
)

// noTmpfile makes Create use a named temporary file (tests of the file
// systems without O_TMPFILE).
var noTmpfile = false

// Options say how Create treats an existing output.
type Options struct {
	// Inputs are the files the command reads; the output may not be any
	// of them.
	Inputs []string
	// Replace allows replacing an existing output; without it an
	// existing output is an error wrapping ErrExists, also when it
	// appears while the temporary file is written.
	Replace bool
	// Perm is the new file's mode before the umask; 0 means 0o644.
	Perm fs.FileMode
}

// File is an output being written. Write through its *os.File; then
// Commit (complete) or Abort (failed). Close after Commit or Publish
// closes the file; a File neither committed nor published is removed by
// Abort.
type File struct {
	*os.File
	path      string // the output's final name
	tmp       string // the temporary name; "" once renamed or when written in place
	replace   bool
	published bool
}

// CheckInputs returns an error wrapping ErrSameFile when path names the
// same file as one of inputs. A path or input that does not exist is no
// conflict.
func CheckInputs(path string, inputs []string) error {
	out, err := os.Stat(path)
	if err != nil {
		return nil
	}
	for _, in := range inputs {
		if st, err := os.Stat(in); err == nil && os.SameFile(out, st) {
			return fmt.Errorf("%s: %w", path, ErrSameFile)
		}
	}
	return nil
}

// Create starts writing the output path: after checking opts.Inputs, an
// unnamed file (O_TMPFILE) in path's directory, or a hidden temporary
// name where the file system has no unnamed files, so that path appears
// only at Commit or Publish. An existing path that is not a regular file
// (a terminal, /dev/null, a pipe) is written in place. A symbolic link as
// path is followed: its target is what gets replaced.
func Create(path string, opts Options) (*File, error) {
	if err := CheckInputs(path, opts.Inputs); err != nil {
		return nil, err
	}
	perm := opts.Perm
	if perm == 0 {
		perm = 0o644
	}
	target := path
	if st, err := os.Stat(path); err == nil {
		if !opts.Replace {
			return nil, fmt.Errorf("%s %w", path, ErrExists)
		}
		if !st.Mode().IsRegular() {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				return nil, err
			}
			return &File{File: f, path: path, published: true}, nil
		}
		if target, err = filepath.EvalSymlinks(path); err != nil {
			return nil, err
		}
	}
	f := &File{path: target, replace: opts.Replace}
	dir := filepath.Dir(target)
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, uint32(perm))
	if err == nil && noTmpfile {
		unix.Close(fd)
		err = unix.EOPNOTSUPP
	}
	if err == nil {
		f.File = os.NewFile(uintptr(fd), target)
		return f, nil
	}
	// No O_TMPFILE here (EOPNOTSUPP, EISDIR on old kernels, FUSE, NFS):
	// a named temporary file.
	for range 100 {
		f.tmp = filepath.Join(dir, "."+filepath.Base(target)+".tmp"+randomSuffix())
		f.File, err = os.OpenFile(f.tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_CLOEXEC, perm)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

func randomSuffix() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Publish syncs what was written and gives the file its name, then lets
// writing go on at that name (a recording streamed after its header). A
// path that appeared meanwhile is an error wrapping ErrExists unless
// Options.Replace.
func (f *File) Publish() error {
	if f.published {
		return nil
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	if err := f.link(); err != nil {
		return err
	}
	f.published = true
	syncDir(filepath.Dir(f.path))
	return nil
}

// link gives the synced file its final name: linkat(2) of the unnamed
// file, or rename(2) of the temporary name; without Replace neither
// overwrites an existing path.
func (f *File) link() error {
	if f.tmp == "" {
		src := fmt.Sprintf("/proc/self/fd/%d", f.Fd())
		if !f.replace {
			return f.noClobber(unix.Linkat(unix.AT_FDCWD, src, unix.AT_FDCWD, f.path, unix.AT_SYMLINK_FOLLOW))
		}
		// Link to a fresh name, then rename that over the output.
		for range 100 {
			tmp := filepath.Join(filepath.Dir(f.path), "."+filepath.Base(f.path)+".tmp"+randomSuffix())
			err := unix.Linkat(unix.AT_FDCWD, src, unix.AT_FDCWD, tmp, unix.AT_SYMLINK_FOLLOW)
			if err == nil {
				f.tmp = tmp
				break
			}
			if err != unix.EEXIST {
				return fmt.Errorf("write %s: %w", f.path, err)
			}
		}
		if f.tmp == "" {
			return fmt.Errorf("write %s: no free temporary name", f.path)
		}
	}
	var err error
	if f.replace {
		err = os.Rename(f.tmp, f.path)
	} else {
		err = unix.Renameat2(unix.AT_FDCWD, f.tmp, unix.AT_FDCWD, f.path, unix.RENAME_NOREPLACE)
		if err == unix.EINVAL || err == unix.ENOSYS {
			// No RENAME_NOREPLACE: link(2) refuses an existing name too.
			if err = unix.Link(f.tmp, f.path); err == nil {
				os.Remove(f.tmp)
			}
		}
	}
	if err != nil {
		os.Remove(f.tmp)
		f.tmp = ""
		return f.noClobber(err)
	}
	f.tmp = ""
	return nil
}

func (f *File) noClobber(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EEXIST):
		return fmt.Errorf("%s %w", f.path, ErrExists)
	}
	return fmt.Errorf("write %s: %w", f.path, err)
}

// Commit completes the output: it publishes it (if Publish has not) and
// closes it. On error nothing is left at a new name.
func (f *File) Commit() error {
	if err := f.Publish(); err != nil {
		f.Abort()
		return err
	}
	if err := f.File.Close(); err != nil {
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	return nil
}

// Abort closes the file and, unless it was published, removes what was
// written. It is safe to call after Commit (a deferred Abort).
func (f *File) Abort() {
	f.File.Close()
	if !f.published && f.tmp != "" {
		os.Remove(f.tmp)
		f.tmp = ""
	}
}

// Name returns the output's final path.
func (f *File) Name() string { return f.path }

// syncDir makes a rename in dir durable; errors are ignored (some file
// systems cannot sync a directory, and the data itself is synced).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
