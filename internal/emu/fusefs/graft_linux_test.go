// SPDX-License-Identifier: Apache-2.0

package fusefs

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/hwpprobe/hwpprobe/internal/emu/vfs"
)

// graftChildEnv makes the test binary act as the child of TestGraft: it
// runs one scenario in the private mount namespace it was started in and
// prints what it sees as JSON.
const graftChildEnv = "FUSEFS_GRAFT_CHILD"

func TestMain(m *testing.M) {
	if sc := os.Getenv(graftChildEnv); sc != "" {
		run := graftChild
		if sc == graftReader {
			run = func(string) error { return readGraft() }
		}
		if err := run(sc); err != nil {
			fmt.Fprintln(os.Stderr, "graft child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// scenarioTree is the emulated tree of a TestGraft scenario: "full" has
// every graft point but cpu_atom; "bare" has only the CPU directory and
// /proc/stat, so the real /dev/cpu and /proc/cpuinfo must be hidden.
func scenarioTree(sc string) *vfs.Dir {
	root := vfs.NewDir()
	root.Put("sys/devices/system/cpu/hwpemu_machine", vfs.Const("test-"+sc))
	root.Put("proc/stat", vfs.Const("cpu  1 0 0 0\ncpu0 1 0 0 0\ncpu1 0 0 0 0\ncpu2 0 0 0 0"))
	if sc == "full" {
		root.Put("dev/cpu/2/msr", &vfs.Device{Mode: 0o600, ReadAt: func(p []byte, off int64) (int, error) {
			if off != 0x771 || len(p) != 8 {
				return 0, syscall.EIO
			}
			binary.LittleEndian.PutUint64(p, 0x01101f53)
			return 8, nil
		}})
		root.Put("sys/devices/cpu_core/cpus", vfs.Const("0-1"))
		root.Put("sys/class/powercap/intel-rapl:0/energy_uj", vfs.Const("12345"))
		root.Put("proc/cpuinfo", vfs.Const("processor\t: 0"))
	}
	return root
}

// view is what a process in the namespace sees at the usual paths.
type view struct {
	DevCPU     []string
	MSR771     string
	Machine    string
	CoreCPUs   string
	EnergyUJ   string
	Stat       string
	CPUInfo    string
	ClassHasLo bool   // a real /sys/class entry survives the mirror
	NetLoLink  string // and its symbolic links still resolve
}

func see() view {
	var v view
	if ents, err := os.ReadDir("/dev/cpu"); err == nil {
		for _, e := range ents {
			v.DevCPU = append(v.DevCPU, e.Name())
		}
	}
	if f, err := os.Open("/dev/cpu/2/msr"); err == nil {
		var b [8]byte
		if _, err := f.ReadAt(b[:], 0x771); err == nil {
			v.MSR771 = fmt.Sprintf("%#x", binary.LittleEndian.Uint64(b[:]))
		}
		f.Close()
	}
	rd := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			return "error: " + errors.Unwrap(err).Error()
		}
		return strings.TrimSpace(string(b))
	}
	v.Machine = rd("/sys/devices/system/cpu/hwpemu_machine")
	v.CoreCPUs = rd("/sys/devices/cpu_core/cpus")
	v.EnergyUJ = rd("/sys/class/powercap/intel-rapl:0/energy_uj")
	v.Stat = rd("/proc/stat")
	v.CPUInfo = rd("/proc/cpuinfo")
	_, err := os.Stat("/sys/class/net/lo")
	v.ClassHasLo = err == nil
	v.NetLoLink, _ = filepath.EvalSymlinks("/sys/class/net/lo")
	return v
}

// graftChild serves the scenario's tree, as hwpemu's server does, and
// starts the test binary again as graftReader with the tree's mount: the
// server never reads its own mount.
func graftChild(sc string) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return err
	}
	s, err := New(scenarioTree(sc), Options{Name: "hwpemu-graft-test"})
	if err != nil {
		return err
	}
	r := exec.Command(os.Args[0], "-test.run=^$")
	r.Env = append(os.Environ(), graftChildEnv+"="+graftReader)
	r.ExtraFiles = []*os.File{s.MountFD()}
	r.Stdout, r.Stderr = os.Stdout, os.Stderr
	r.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return r.Run()
}

// graftReader is graftChild's child: it grafts the tree it was given as
// descriptor 3 and prints what it sees.
const graftReader = "reader"

func readGraft() error {
	if _, err := Graft(os.NewFile(3, "tree"), "/"); err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(see())
}

// TestGraft runs each scenario in a child process started in a new mount
// namespace and compares what it sees at the real paths; the test's own
// namespace must be unchanged.
func TestGraft(t *testing.T) {
	// /proc/stat moves on its own: compare the stable part of the view.
	stable := func(v view) view {
		v.Stat = strings.Fields(v.Stat + " ")[0]
		v.CPUInfo = strings.SplitN(v.CPUInfo, "\n", 2)[0]
		return v
	}
	before := stable(see())
	realLo, _ := filepath.EvalSymlinks("/sys/class/net/lo")
	tests := []struct {
		sc   string
		want view
	}{
		{"full", view{
			DevCPU:     []string{"2"},
			MSR771:     "0x1101f53",
			Machine:    "test-full",
			CoreCPUs:   "0-1",
			EnergyUJ:   "12345",
			Stat:       "cpu  1 0 0 0\ncpu0 1 0 0 0\ncpu1 0 0 0 0\ncpu2 0 0 0 0",
			CPUInfo:    "processor\t: 0",
			ClassHasLo: true,
			NetLoLink:  realLo,
		}},
		{"bare", view{
			DevCPU:     nil, // the real /dev/cpu is hidden
			Machine:    "test-bare",
			CoreCPUs:   "error: no such file or directory",
			EnergyUJ:   "error: no such file or directory",
			Stat:       "cpu  1 0 0 0\ncpu0 1 0 0 0\ncpu1 0 0 0 0\ncpu2 0 0 0 0",
			CPUInfo:    "", // /dev/null
			ClassHasLo: true,
			NetLoLink:  realLo,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.sc, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), graftChildEnv+"="+tt.sc)
			cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("child: %v: %s", err, stderr.String())
			}
			var got view
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("child output %q: %v", out, err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("view in the namespace (-want +got):\n%s", d)
			}
		})
	}
	if d := cmp.Diff(before, stable(see())); d != "" {
		t.Errorf("the test's own namespace changed (-before +after):\n%s", d)
	}
	if strings.Contains(mountinfo(t), "hwpemu-graft-test") {
		t.Error("a graft mount leaked into the test's namespace")
	}
	if len(before.DevCPU) == 0 || before.MSR771 != "" || before.Stat != "cpu" {
		t.Errorf("real /dev/cpu looks emulated: %+v", before)
	}
}

func TestGraftRefusesUncoveredFiles(t *testing.T) {
	tree := vfs.NewDir()
	tree.Put("sys/kernel/debug/x", vfs.Const("1"))
	s, err := New(tree, Options{Name: "hwpemu-uncovered"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.MountFD().Close()
	if _, err := Graft(s.MountFD(), t.TempDir()); !errors.Is(err, ErrOutsideGraft) {
		t.Errorf("Graft of sys/kernel/debug/x: %v, want ErrOutsideGraft", err)
	}
}
