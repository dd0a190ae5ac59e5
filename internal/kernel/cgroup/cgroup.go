// SPDX-License-Identifier: Apache-2.0

// Package cgroup makes a control group for one command and holds its CPU
// bandwidth to a quota, on the cpu controller of cgroup v2 (cpu.max) or of
// cgroup v1 (cpu.cfs_quota_us and cpu.cfs_period_us), as the kernel's
// Documentation/admin-guide/cgroup-v2.rst and
// Documentation/scheduler/sched-bwc.rst describe them. hwpemu's closed loop
// (docs/emulator.md, "Closed loop") uses it.
package cgroup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Errors Detect and Create return (wrapped).
var (
	// ErrNoController: the host has no cpu controller a group can be
	// made on (none mounted, cgroup v2 without cpu enabled, a kernel
	// without CFS bandwidth control, cgroup v1 without cpuacct).
	ErrNoController = errors.New("no usable cpu controller")
	// ErrPermission: the group's directory could not be made (not root,
	// a read-only cgroup file system).
	ErrPermission = errors.New("no permission to create a cgroup")
)

// Period is the CFS bandwidth period every group gets: the kernel's
// default, 100 ms. The quota is the CPU time the group may use in each.
const Period = 100 * time.Millisecond

// minQuota is the smallest quota the kernel accepts (sched-bwc.rst: 1 ms).
const minQuota = time.Millisecond

// Hierarchy is where a group is made: the directory of the cpu
// controller's hierarchy the new group goes in, and on cgroup v1 the
// cpuacct hierarchy's, which counts the group's CPU time.
type Hierarchy struct {
	V2   bool
	CPU  string // parent directory of new groups on the cpu controller
	Acct string // v1 only: parent directory on cpuacct; "" when cpu and cpuacct share a hierarchy
	// OwnV2 is, on cgroup v2, the detecting process's own group (CPU may
	// be the root instead); on v1 CPU and Acct are its own groups.
	OwnV2 string

	mkdir func(string) error // os.Mkdir; tests of a fake tree make the kernel's files too
}

// DetectHost finds the host's cpu controller from /proc/self/mountinfo and
// /proc/self/cgroup (see Detect).
func DetectHost() (Hierarchy, error) {
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return Hierarchy{}, fmt.Errorf("cgroup: %w", err)
	}
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return Hierarchy{}, fmt.Errorf("cgroup: %w", err)
	}
	return Detect(mi, cg)
}

// mount is a cgroup file system in mountinfo.
type mount struct {
	dir, root string // mount point; the hierarchy's directory mounted there
	v2        bool
	opts      []string // v1: super options (the controllers)
}

// Detect finds the cpu controller from the texts of /proc/self/mountinfo
// and /proc/self/cgroup: cgroup v2 when its hierarchy lists cpu in
// cgroup.controllers, else the cgroup v1 hierarchy mounted with cpu (and
// the one with cpuacct). New groups go below the process's own group of
// that hierarchy; on v2, where a group can have cpu only if its parent
// enables it in cgroup.subtree_control, below the hierarchy's root when
// the own group does not.
func Detect(mountinfo, self []byte) (Hierarchy, error) {
	var mounts []mount
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := slices.Index(f, "-")
		if sep < 6 || len(f) < sep+4 {
			continue
		}
		m := mount{root: unescape(f[3]), dir: unescape(f[4])}
		switch f[sep+1] {
		case "cgroup2":
			m.v2 = true
		case "cgroup":
			m.opts = strings.Split(f[sep+3], ",")
		default:
			continue
		}
		mounts = append(mounts, m)
	}
	own := ownGroups(self)
	for _, m := range mounts {
		if !m.v2 {
			continue
		}
		ctl, err := os.ReadFile(filepath.Join(m.dir, "cgroup.controllers"))
		if err != nil || !slices.Contains(strings.Fields(string(ctl)), "cpu") {
			continue
		}
		h, err := v2Parent(m, own[""])
		if err != nil {
			return h, err
		}
		h.OwnV2 = inMount(m, own[""])
		return h, nil
	}
	var h Hierarchy
	cpu, acct := -1, -1
	for i, m := range mounts {
		if m.v2 {
			continue
		}
		if slices.Contains(m.opts, "cpu") && cpu < 0 {
			cpu = i
		}
		if slices.Contains(m.opts, "cpuacct") && acct < 0 {
			acct = i
		}
	}
	if cpu < 0 {
		return h, fmt.Errorf("%w: no cgroup v2 hierarchy lists cpu in cgroup.controllers and no cgroup v1 hierarchy is mounted with cpu", ErrNoController)
	}
	if acct < 0 {
		return h, fmt.Errorf("%w: cgroup v1 cpu is at %s but no hierarchy has cpuacct, which counts the command's CPU time", ErrNoController, mounts[cpu].dir)
	}
	h.CPU = inMount(mounts[cpu], own["cpu"])
	if acct != cpu {
		h.Acct = inMount(mounts[acct], own["cpuacct"])
	}
	return h, nil
}

// v2Parent is the directory new groups go in on cgroup v2 mount m, for a
// process in group path: its own group if that enables cpu for its
// children, else the root if it does.
func v2Parent(m mount, path string) (Hierarchy, error) {
	for _, dir := range []string{inMount(m, path), m.dir} {
		sub, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
		if err == nil && slices.Contains(strings.Fields(string(sub)), "cpu") {
			return Hierarchy{V2: true, CPU: dir}, nil
		}
	}
	return Hierarchy{}, fmt.Errorf("%w: cgroup v2 at %s: cpu is not enabled in cgroup.subtree_control (neither of %s nor of the root)", ErrNoController, m.dir, path)
}

// ownGroups maps each controller of /proc/self/cgroup to the process's
// group ("" for cgroup v2's line).
func ownGroups(self []byte) map[string]string {
	own := map[string]string{}
	for line := range strings.Lines(string(self)) {
		f := strings.SplitN(strings.TrimSuffix(line, "\n"), ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[1] == "" {
			own[""] = f[2]
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			own[c] = f[2]
		}
	}
	return own
}

// inMount is the directory of group path (as /proc/self/cgroup names it)
// below mount m, which shows the hierarchy from m.root on; the mount
// point itself when the group lies outside what it shows.
func inMount(m mount, path string) string {
	rel, err := filepath.Rel(m.root, path)
	if path == "" || err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return m.dir
	}
	return filepath.Join(m.dir, rel)
}

// unescape undoes mountinfo's octal escapes of space, tab, newline and
// backslash.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Group is a control group made for one command.
type Group struct {
	V2   bool
	Dirs []string // the cpu controller's directory; on v1 with a separate cpuacct hierarchy, that one's second
}

// Own is the group the detecting process is in, on the hierarchy's cpu
// controller (and on v1 its cpuacct group): a process moved there is where
// that process is, scheduled as it is.
func (h Hierarchy) Own() *Group {
	if h.V2 {
		return &Group{V2: true, Dirs: []string{h.OwnV2}}
	}
	g := &Group{Dirs: []string{h.CPU}}
	if h.Acct != "" {
		g.Dirs = append(g.Dirs, h.Acct)
	}
	return g
}

// Create makes the group name in h (and on v1 in its cpuacct hierarchy),
// sets its period (Period) and leaves its quota unlimited. A directory
// that cannot be made is ErrPermission; one made without the bandwidth
// files (a kernel without CONFIG_CFS_BANDWIDTH) is removed again and is
// ErrNoController.
func (h Hierarchy) Create(name string) (*Group, error) {
	if name == "" || strings.ContainsAny(name, "/,") || name == "." || name == ".." {
		return nil, fmt.Errorf("cgroup: bad group name %q", name)
	}
	mkdir := h.mkdir
	if mkdir == nil {
		mkdir = func(p string) error { return os.Mkdir(p, 0o755) }
	}
	g := &Group{V2: h.V2}
	for _, parent := range []string{h.CPU, h.Acct} {
		if parent == "" {
			continue
		}
		dir := filepath.Join(parent, name)
		if strings.Contains(dir, ",") {
			return nil, errors.Join(fmt.Errorf("cgroup: %s: a comma in the path", dir), g.Remove())
		}
		if err := mkdir(dir); err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) && (errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)) {
				err = fmt.Errorf("%w: %s: %w", ErrPermission, dir, pe.Err)
			} else {
				err = fmt.Errorf("cgroup: %w", err)
			}
			return nil, errors.Join(err, g.Remove())
		}
		g.Dirs = append(g.Dirs, dir)
	}
	if _, err := os.Stat(g.quotaFile()); err != nil {
		return nil, errors.Join(fmt.Errorf("%w: %s has no %s (a kernel without CFS bandwidth control)", ErrNoController, g.Dirs[0], filepath.Base(g.quotaFile())), g.Remove())
	}
	if !g.V2 {
		if err := write(filepath.Join(g.Dirs[0], "cpu.cfs_period_us"), strconv.FormatInt(Period.Microseconds(), 10)); err != nil {
			return nil, errors.Join(err, g.Remove())
		}
	}
	if err := g.SetQuota(math.Inf(1)); err != nil {
		return nil, errors.Join(err, g.Remove())
	}
	return g, nil
}

// String is the group as ParseGroup reads it: "v1:" or "v2:" and the
// directories, separated by commas.
func (g *Group) String() string {
	v := "v1:"
	if g.V2 {
		v = "v2:"
	}
	return v + strings.Join(g.Dirs, ",")
}

// ParseGroup reads a group String wrote.
func ParseGroup(s string) (*Group, error) {
	v, dirs, ok := strings.Cut(s, ":")
	if !ok || (v != "v1" && v != "v2") || dirs == "" {
		return nil, fmt.Errorf("cgroup: %q is not v1:DIR[,DIR] or v2:DIR", s)
	}
	g := &Group{V2: v == "v2", Dirs: strings.Split(dirs, ",")}
	if len(g.Dirs) > 2 || (g.V2 && len(g.Dirs) > 1) || slices.Contains(g.Dirs, "") {
		return nil, fmt.Errorf("cgroup: %q is not v1:DIR[,DIR] or v2:DIR", s)
	}
	return g, nil
}

func (g *Group) quotaFile() string {
	if g.V2 {
		return filepath.Join(g.Dirs[0], "cpu.max")
	}
	return filepath.Join(g.Dirs[0], "cpu.cfs_quota_us")
}

// write writes s to file, as one write(2), without creating it.
func write(file, s string) error {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_TRUNC, 0) // kernfs ignores O_TRUNC
	if err != nil {
		return fmt.Errorf("cgroup: %w", err)
	}
	_, err = f.WriteString(s)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cgroup: write %q to %s: %w", strings.TrimSpace(s), file, err)
	}
	return nil
}

// Join moves the calling process (every thread of it) into the group:
// "0" written to each directory's cgroup.procs.
func (g *Group) Join() error { return g.Add(0) }

// Add moves process pid (every thread of it; 0: the caller) into the
// group: pid written to each directory's cgroup.procs. The processes it
// starts afterwards are born in the group.
func (g *Group) Add(pid int) error {
	for _, d := range g.Dirs {
		if err := write(filepath.Join(d, "cgroup.procs"), strconv.Itoa(pid)); err != nil {
			return err
		}
	}
	return nil
}

// SetQuota lets the group use cpus CPUs' worth of time per Period (+Inf:
// no limit); a quota below the kernel's 1 ms minimum is 1 ms. v2 writes
// "QUOTA PERIOD" (or "max PERIOD") to cpu.max; v1 writes the quota (-1:
// none) to cpu.cfs_quota_us, in microseconds (Create set the period).
// Every write refills the group's runtime and unthrottles it (the
// kernel's tg_set_cfs_bandwidth()): callers should write only a changed
// quota.
func (g *Group) SetQuota(cpus float64) error {
	per := Period.Microseconds()
	q := "max"
	if !math.IsInf(cpus, 1) {
		q = strconv.FormatInt(max(minQuota.Microseconds(), int64(math.Round(cpus*float64(per)))), 10)
	}
	if g.V2 {
		return write(g.quotaFile(), q+" "+strconv.FormatInt(per, 10))
	}
	if q == "max" {
		q = "-1"
	}
	return write(g.quotaFile(), q)
}

// Procs lists the processes in the group (cgroup.procs: thread group
// ids), in the reader's PID namespace.
func (g *Group) Procs() ([]int, error) {
	file := filepath.Join(g.Dirs[0], "cgroup.procs")
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	var pids []int
	for _, s := range strings.Fields(string(b)) {
		p, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("cgroup: %s: %q is not a process id", file, s)
		}
		pids = append(pids, p)
	}
	return pids, nil
}

// Usage is the CPU time every task of the group has used since it was
// made, those that ended included: v2 cpu.stat usage_usec, v1
// cpuacct.usage (ns).
func (g *Group) Usage() (time.Duration, error) {
	if g.V2 {
		file := filepath.Join(g.Dirs[0], "cpu.stat")
		b, err := os.ReadFile(file)
		if err != nil {
			return 0, fmt.Errorf("cgroup: %w", err)
		}
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "usage_usec "); ok {
				us, err := strconv.ParseUint(v, 10, 63)
				if err != nil {
					return 0, fmt.Errorf("cgroup: %s: usage_usec %q: %w", file, v, err)
				}
				return time.Duration(us) * time.Microsecond, nil
			}
		}
		return 0, fmt.Errorf("cgroup: %s has no usage_usec", file)
	}
	file := filepath.Join(g.Dirs[len(g.Dirs)-1], "cpuacct.usage")
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, fmt.Errorf("cgroup: %w", err)
	}
	ns, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 63)
	if err != nil {
		return 0, fmt.Errorf("cgroup: %s: %w", file, err)
	}
	return time.Duration(ns), nil
}

// removeWait bounds how long Remove waits for the group's last tasks to
// be released (a killed task leaves its group when its parent has reaped
// it).
const removeWait = 2 * time.Second

// Remove removes the group's directories (rmdir), waiting up to 2 s while
// the kernel still counts a task in them (EBUSY). A directory already
// gone is no error.
func (g *Group) Remove() error {
	var errs []error
	for _, d := range g.Dirs {
		deadline := time.Now().Add(removeWait)
		for {
			err := syscall.Rmdir(d)
			if err == syscall.EBUSY && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			if err != nil && err != syscall.ENOENT {
				errs = append(errs, fmt.Errorf("cgroup: remove %s: %w", d, err))
			}
			break
		}
	}
	return errors.Join(errs...)
}

// RemoveStale removes the empty groups left in h by processes that were
// killed before they could remove theirs: directories named prefix
// followed by a process id for which alive is false. A group that still
// holds a task stays (rmdir refuses it).
func (h Hierarchy) RemoveStale(prefix string, alive func(pid int) bool) {
	for _, parent := range []string{h.CPU, h.Acct} {
		if parent == "" {
			continue
		}
		ents, _ := os.ReadDir(parent)
		for _, e := range ents {
			n, ok := strings.CutPrefix(e.Name(), prefix)
			pid, err := strconv.Atoi(n)
			if !ok || err != nil || !e.IsDir() || alive(pid) {
				continue
			}
			_ = syscall.Rmdir(filepath.Join(parent, e.Name()))
		}
	}
}
