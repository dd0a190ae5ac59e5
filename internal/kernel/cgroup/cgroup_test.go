// SPDX-License-Identifier: Apache-2.0

package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func writeFiles(t *testing.T, files map[string]string) {
	t.Helper()
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDetect finds the cpu controller from mountinfo and /proc/self/cgroup
// texts: this VM's hybrid layout (v1 cpu and cpuacct apart, an empty
// cgroup2), the common v1 "cpu,cpuacct" mount, v2 with cpu enabled in the
// own group or only in the root, and hosts without a usable one.
func TestDetect(t *testing.T) {
	v2 := t.TempDir()
	writeFiles(t, map[string]string{
		v2 + "/cgroup.controllers":                "cpuset cpu io memory pids\n",
		v2 + "/cgroup.subtree_control":            "cpu memory\n",
		v2 + "/user.slice/cgroup.subtree_control": "",
		v2 + "/svc/cgroup.subtree_control":        "cpu\n",
	})
	v2off := t.TempDir()
	writeFiles(t, map[string]string{v2off + "/cgroup.controllers": "cpu memory\n", v2off + "/cgroup.subtree_control": "memory\n"})
	empty := t.TempDir()
	writeFiles(t, map[string]string{empty + "/cgroup.controllers": "hugetlb\n"})
	line := func(dir, root, fstype, opts string) string {
		return fmt.Sprintf("30 20 0:26 %s %s rw,relatime shared:9 - %s cgroup %s\n", root, dir, fstype, opts)
	}
	hybrid := line("/sys/fs/cgroup/cpu", "/", "cgroup", "rw,cpu") + line("/sys/fs/cgroup/cpuacct", "/", "cgroup", "rw,cpuacct") +
		line(empty, "/", "cgroup2", "rw")
	for _, tc := range []struct {
		name, mountinfo, self string
		want                  Hierarchy
		err                   error
	}{
		{"this VM: v1 cpu and cpuacct apart", hybrid, "2:cpuacct:/\n1:cpu:/\n0::/\n",
			Hierarchy{CPU: "/sys/fs/cgroup/cpu", Acct: "/sys/fs/cgroup/cpuacct"}, nil},
		{"v1 co-mounted, own group", line("/sys/fs/cgroup/cpu,cpuacct", "/", "cgroup", "rw,cpu,cpuacct"), "4:cpu,cpuacct:/user.slice\n",
			Hierarchy{CPU: "/sys/fs/cgroup/cpu,cpuacct/user.slice"}, nil},
		{"v1 mounted at a sub-hierarchy", line("/sys/fs/cgroup/cpu", "/docker/abc", "cgroup", "rw,cpuacct,cpu"), "4:cpu,cpuacct:/docker/abc/x\n",
			Hierarchy{CPU: "/sys/fs/cgroup/cpu/x"}, nil},
		{"v1 cpuset is not cpu", line("/sys/fs/cgroup/cpuset", "/", "cgroup", "rw,cpuset") + line(empty, "/", "cgroup2", "rw"), "0::/\n",
			Hierarchy{}, ErrNoController},
		{"v1 cpu without cpuacct", line("/sys/fs/cgroup/cpu", "/", "cgroup", "rw,cpu"), "1:cpu:/\n", Hierarchy{}, ErrNoController},
		{"v2, own group enables cpu", line(v2, "/", "cgroup2", "rw"), "0::/svc\n", Hierarchy{V2: true, CPU: v2 + "/svc", OwnV2: v2 + "/svc"}, nil},
		{"v2, only the root enables cpu", line(v2, "/", "cgroup2", "rw"), "0::/user.slice\n", Hierarchy{V2: true, CPU: v2, OwnV2: v2 + "/user.slice"}, nil},
		{"v2 wins over v1", hybrid + line(v2, "/", "cgroup2", "rw"), "0::/\n", Hierarchy{V2: true, CPU: v2, OwnV2: v2}, nil},
		{"v2 with cpu not enabled", line(v2off, "/", "cgroup2", "rw"), "0::/\n", Hierarchy{}, ErrNoController},
		{"no cgroup at all", "22 1 0:21 / /proc rw - proc proc rw\n", "", Hierarchy{}, ErrNoController},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Detect([]byte(tc.mountinfo), []byte(tc.self))
			if !errors.Is(err, tc.err) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
			if d := cmp.Diff(tc.want, got, cmpopts.IgnoreUnexported(Hierarchy{})); d != "" {
				t.Errorf("hierarchy (-want +got):\n%s", d)
			}
		})
	}
}

// TestOwn: the group a process is in, as Detect found it: v1's cpu group
// (and cpuacct's, apart), v2's own group even where new groups go below
// the root.
func TestOwn(t *testing.T) {
	for _, tc := range []struct {
		h    Hierarchy
		want *Group
	}{
		{Hierarchy{CPU: "/c/cpu/x", Acct: "/c/cpuacct/x"}, &Group{Dirs: []string{"/c/cpu/x", "/c/cpuacct/x"}}},
		{Hierarchy{CPU: "/c/cpu,cpuacct/x"}, &Group{Dirs: []string{"/c/cpu,cpuacct/x"}}},
		{Hierarchy{V2: true, CPU: "/c", OwnV2: "/c/user.slice"}, &Group{V2: true, Dirs: []string{"/c/user.slice"}}},
	} {
		if d := cmp.Diff(tc.want, tc.h.Own()); d != "" {
			t.Errorf("%+v: Own (-want +got):\n%s", tc.h, d)
		}
	}
}

// fakeV2 is a cgroup v2 parent directory whose mkdir makes the files the
// kernel makes in a new group with the cpu controller (cgroup-v2.rst:
// cpu.max "max 100000", cgroup.procs, cgroup.threads, cpu.stat).
func fakeV2(t *testing.T, subtree string) Hierarchy {
	dir := t.TempDir()
	writeFiles(t, map[string]string{dir + "/cgroup.controllers": "cpu\n", dir + "/cgroup.subtree_control": subtree})
	return Hierarchy{V2: true, CPU: dir, mkdir: func(p string) error {
		if err := os.Mkdir(p, 0o755); err != nil {
			return err
		}
		writeFiles(t, map[string]string{p + "/cpu.max": "max 100000\n", p + "/cgroup.procs": "", p + "/cgroup.threads": "",
			p + "/cpu.stat": "usage_usec 0\nuser_usec 0\nsystem_usec 0\n"})
		return nil
	}}
}

// TestV2Files checks what the group writes and reads on cgroup v2, on a
// fake tree with the files' documented contents: cpu.max "QUOTA PERIOD"
// in µs, "max" for no limit, the 1 ms floor; cgroup.procs; cpu.stat's
// usage_usec.
func TestV2Files(t *testing.T) {
	h := fakeV2(t, "cpu\n")
	g, err := h.Create("hwpemu-7")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(h.CPU, "hwpemu-7")
	if d := cmp.Diff(&Group{V2: true, Dirs: []string{dir}}, g); d != "" {
		t.Errorf("group (-want +got):\n%s", d)
	}
	for _, tc := range []struct {
		cpus float64
		want string
	}{
		{math.Inf(1), "max 100000"}, {0.5, "50000 100000"}, {1.2345678, "123457 100000"}, {0.0001, "1000 100000"}, {2, "200000 100000"},
	} {
		if err := g.SetQuota(tc.cpus); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(dir + "/cpu.max"); string(b) != tc.want {
			t.Errorf("SetQuota(%g): cpu.max %q, want %q", tc.cpus, b, tc.want)
		}
	}
	writeFiles(t, map[string]string{dir + "/cgroup.procs": "12\n1\n345\n", dir + "/cpu.stat": "usage_usec 1500250\nuser_usec 1000000\n"})
	procs, err := g.Procs()
	if d := cmp.Diff([]int{12, 1, 345}, procs); err != nil || d != "" {
		t.Errorf("Procs: %v (-want +got):\n%s", err, d)
	}
	if u, err := g.Usage(); err != nil || u != 1500250*time.Microsecond {
		t.Errorf("Usage = %v, %v, want 1.50025s", u, err)
	}
	// Join writes "0": the writer itself.
	writeFiles(t, map[string]string{dir + "/cgroup.procs": ""})
	if err := g.Join(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dir + "/cgroup.procs"); string(b) != "0" {
		t.Errorf("Join wrote %q, want \"0\"", b)
	}
	if err := g.Add(345); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dir + "/cgroup.procs"); string(b) != "345" {
		t.Errorf("Add(345) wrote %q, want \"345\"", b)
	}
	s, err := ParseGroup(g.String())
	if d := cmp.Diff(g, s); err != nil || d != "" {
		t.Errorf("ParseGroup(%q): %v (-want +got):\n%s", g.String(), err, d)
	}
	// The fake tree's files make rmdir fail with ENOTEMPTY, as a group's
	// directory never does: empty it as the kernel would.
	for _, f := range []string{"cpu.max", "cgroup.procs", "cgroup.threads", "cpu.stat"} {
		os.Remove(filepath.Join(dir, f))
	}
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s left: %v", dir, err)
	}
}

// TestCreateErrors: a v2 parent without cpu in cgroup.subtree_control
// (no cpu.max appears in the new group) is ErrNoController and leaves no
// directory; a refused mkdir is ErrPermission; both are one line.
func TestCreateErrors(t *testing.T) {
	noCPU := fakeV2(t, "")
	noCPU.mkdir = nil // a plain directory, as a parent without cpu gives
	denied := fakeV2(t, "cpu\n")
	denied.mkdir = func(p string) error { return &fs.PathError{Op: "mkdir", Path: p, Err: syscall.EACCES} }
	rofs := fakeV2(t, "cpu\n")
	rofs.mkdir = func(p string) error { return &fs.PathError{Op: "mkdir", Path: p, Err: syscall.EROFS} }
	for _, tc := range []struct {
		name string
		h    Hierarchy
		want error
	}{
		{"no cpu.max", noCPU, ErrNoController}, {"EACCES", denied, ErrPermission}, {"EROFS", rofs, ErrPermission},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.h.Create("hwpemu-1")
			if !errors.Is(err, tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q, want one line wrapping %v", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(tc.h.CPU, "hwpemu-1")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the group's directory is left: %v", err)
			}
		})
	}
}

// TestHostController makes a group on this host's real cpu controller
// (cgroup v1 here: cpu.cfs_quota_us, cpuacct.usage), sets quotas, reads
// them back and removes it; RemoveStale removes an empty group of a dead
// process and keeps one of a live process.
func TestHostController(t *testing.T) {
	h, err := DetectHost()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("host: %+v", h)
	g, err := h.Create(fmt.Sprintf("hwpemu-test-%d", os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Remove()
	quota := "cpu.cfs_quota_us"
	if g.V2 {
		quota = "cpu.max"
	}
	for _, tc := range []struct {
		cpus   float64
		v1, v2 string
	}{{0.5, "50000", "50000 100000"}, {math.Inf(1), "-1", "max 100000"}} {
		if err := g.SetQuota(tc.cpus); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(g.Dirs[0], quota))
		want := map[bool]string{false: tc.v1, true: tc.v2}[g.V2]
		if strings.TrimSpace(string(b)) != want {
			t.Errorf("SetQuota(%g): %s reads %q, want %q", tc.cpus, quota, b, want)
		}
	}
	if _, err := g.Usage(); err != nil {
		t.Error(err)
	}
	// Add moves another process: /proc/PID/cgroup then names the group.
	sleep := exec.Command("sleep", "10")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	err = g.Add(sleep.Process.Pid)
	self, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", sleep.Process.Pid))
	sleep.Process.Kill()
	sleep.Wait()
	if err != nil || !strings.Contains(string(self), "/"+filepath.Base(g.Dirs[0])+"\n") {
		t.Errorf("Add: %v; the process's /proc/PID/cgroup:\n%s\nwant %s", err, self, filepath.Base(g.Dirs[0]))
	}
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	stale, err := h.Create("hwpemu-stale-1")
	if err != nil {
		t.Fatal(err)
	}
	defer stale.Remove()
	h.RemoveStale("hwpemu-stale-", func(int) bool { return true })
	if _, err := os.Stat(stale.Dirs[0]); err != nil {
		t.Errorf("RemoveStale removed a live process's group: %v", err)
	}
	h.RemoveStale("hwpemu-stale-", func(int) bool { return false })
	for _, d := range stale.Dirs {
		if _, err := os.Stat(d); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("RemoveStale left %s: %v", d, err)
		}
	}
}
