// SPDX-License-Identifier: Apache-2.0

package capture

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/hwpprobe/hwpprobe/internal/emu"
	"github.com/hwpprobe/hwpprobe/internal/emu/fusefs"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
)

const cpuDir = "sys/devices/system/cpu"

// maxFileBytes bounds one captured file (sysfs attributes are at most a
// page; /proc/cpuinfo of a large server is a few hundred KiB).
const maxFileBytes = 4 << 20

// captureFiles reads the kernel files a description serves verbatim.
// Directories are read whole, except links that lead out of the served
// paths (device, subsystem, driver), which are no power-management state.
func (c *capturer) captureFiles(present cpus.List) {
	for _, f := range []string{"online", "present", "possible", "offline", "kernel_max"} {
		c.file(cpuDir+"/"+f, false)
	}
	for _, d := range []string{"cpufreq", "intel_pstate", "amd_pstate"} {
		c.dir(cpuDir + "/" + d)
	}
	for _, n := range present {
		dir := fmt.Sprintf("%s/cpu%d", cpuDir, n)
		c.file(dir+"/online", true)
		if !c.selected.Contains(n) {
			continue
		}
		c.dir(dir + "/topology")
		c.dir(dir + "/cache")
		c.entry(dir + "/cpufreq")
		c.file(dir+"/power/energy_perf_bias", true)
	}
	for _, pmu := range []string{"cpu_core", "cpu_atom"} {
		c.file("sys/devices/"+pmu+"/cpus", true)
	}
	c.dir("sys/class/powercap")
}

// entry captures whatever is at rel: a file, a directory or a link.
func (c *capturer) entry(rel string) {
	fi, err := os.Lstat(c.path(rel))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		c.unreadable(rel, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		c.link(rel)
	case fi.IsDir():
		c.dir(rel)
	default:
		c.file(rel, false)
	}
}

// dir captures the directory at rel (through a link, if rel is one) and
// everything below it. A directory already captured elsewhere (the same
// kernel object reached by two paths) becomes a link to that place.
func (c *capturer) dir(rel string) {
	real, err := filepath.EvalSymlinks(c.path(rel))
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		c.unreadable(rel, err)
		return
	}
	if prev, ok := c.visited[real]; ok {
		target, _ := filepath.Rel(path.Dir(rel), prev)
		c.files = append(c.files, emu.FileEntry{Path: rel, Link: target})
		return
	}
	c.visited[real] = rel
	ents, err := os.ReadDir(c.path(rel))
	if err != nil {
		c.unreadable(rel, err)
		return
	}
	if len(ents) == 0 {
		c.files = append(c.files, emu.FileEntry{Path: rel, Dir: true})
	}
	for _, e := range ents {
		child := rel + "/" + e.Name()
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			c.link(child)
		case e.IsDir():
			if e.Name() != "power" { // runtime PM of the device, not the CPU's
				c.dir(child)
			}
		default:
			c.file(child, false)
		}
	}
}

// link keeps a link whose target lies inside the served paths (cpuN/cpufreq
// -> ../cpufreq/policyN), follows the entries of /sys/class/powercap (links
// into /sys/devices/virtual/powercap) and drops the others.
func (c *capturer) link(rel string) {
	target, err := os.Readlink(c.path(rel))
	if err != nil {
		c.unreadable(rel, err)
		return
	}
	resolved := path.Join(path.Dir(rel), target)
	if !path.IsAbs(target) && served(resolved) {
		c.files = append(c.files, emu.FileEntry{Path: rel, Link: target})
		return
	}
	if path.Dir(rel) == "sys/class/powercap" {
		c.dir(rel)
	}
}

// served reports whether rel lies below a path hwpemu serves.
func served(rel string) bool {
	for _, g := range fusefs.GraftPoints() {
		if rel == g || strings.HasPrefix(rel, g+"/") {
			return true
		}
	}
	return false
}

// file captures the regular file at rel; a missing one is skipped
// silently when optional, and a write-only attribute always (it has no
// content to read).
func (c *capturer) file(rel string, optional bool) {
	b, mode, err := readFile(c.path(rel))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if !optional {
			c.unreadable(rel, err)
		}
	case errors.Is(err, errWriteOnly):
	case err != nil:
		c.unreadable(rel, err)
	default:
		c.files = append(c.files, emu.FileEntry{Path: rel, Mode: fmt.Sprintf("%04o", mode), Content: string(b)})
	}
}

var (
	errWriteOnly  = errors.New("write-only")
	errNotRegular = errors.New("not a regular file")
	errTooLarge   = fmt.Errorf("larger than %d MiB", maxFileBytes>>20)
)

// readFile reads a regular file of at most maxFileBytes without waiting on
// anything else (a FIFO is refused, not opened for a writer).
func readFile(p string) ([]byte, fs.FileMode, error) {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		if fi, serr := os.Stat(p); serr == nil && fi.Mode().Perm()&0o444 == 0 {
			return nil, 0, errWriteOnly
		}
		return nil, 0, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, errNotRegular
	}
	if fi.Mode().Perm()&0o444 == 0 {
		return nil, 0, errWriteOnly
	}
	b, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, 0, err
	}
	if len(b) > maxFileBytes {
		return nil, 0, errTooLarge
	}
	return b, fi.Mode().Perm(), nil
}
