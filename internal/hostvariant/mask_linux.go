// SPDX-License-Identifier: Apache-2.0

package hostvariant

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// apply masks this process's view of the host. The process must be alone
// in a mount namespace of its own (Each starts it with CLONE_NEWNS): the
// mounts are made private first, so nothing reaches the host's.
func (m Mask) apply() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	hide := map[string][]string{} // directory -> names hidden there
	for _, p := range m.Hide {
		paths, err := expand(p)
		if err != nil {
			return err
		}
		for _, p := range paths {
			dir, name := filepath.Split(p)
			dir = filepath.Clean(dir)
			hide[dir] = append(hide[dir], name)
		}
	}
	if m.Power != nil {
		hide[filepath.Clean(pmuDir)] = append(hide[filepath.Clean(pmuDir)], "power")
	}
	dirs := make([]string, 0, len(hide))
	for d := range hide {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs) // parents before children
	for _, d := range dirs {
		if err := hideIn(d, hide[d]); err != nil {
			return err
		}
	}
	if m.Power != nil {
		if err := writePowerPMU(filepath.Join(pmuDir, "power"), m.Power); err != nil {
			return err
		}
	}
	if m.NoCPUIDFaulting {
		return RefuseCPUIDFaulting()
	}
	return nil
}

// expand resolves the wildcards of a Mask.Hide path: a "*" element
// matches every directory there, a trailing "*" every entry starting
// with what comes before it. Paths that do not exist are left out.
func expand(p string) ([]string, error) {
	elems := strings.Split(strings.TrimPrefix(p, "/"), "/")
	cur := []string{"/"}
	for i, e := range elems {
		last := i == len(elems)-1
		var next []string
		for _, dir := range cur {
			if !strings.HasSuffix(e, "*") {
				q := filepath.Join(dir, e)
				if _, err := os.Lstat(q); err == nil {
					next = append(next, q)
				}
				continue
			}
			ents, err := os.ReadDir(dir)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("expand %s: %w", p, err)
			}
			prefix := strings.TrimSuffix(e, "*")
			for _, ent := range ents {
				if !strings.HasPrefix(ent.Name(), prefix) {
					continue
				}
				if !last {
					if fi, err := os.Stat(filepath.Join(dir, ent.Name())); err != nil || !fi.IsDir() {
						continue
					}
				}
				next = append(next, filepath.Join(dir, ent.Name()))
			}
		}
		cur = next
	}
	return cur, nil
}

// hideIn replaces directory dir by a tmpfs that holds all its entries but
// names: directories, files and device nodes bound from the real ones,
// symbolic links copied (with relative targets, they lead where they did).
func hideIn(dir string, names []string) error {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil // nothing to hide
		}
		return fmt.Errorf("hide in %s: %w", dir, err)
	}
	// The real directory stays reachable through this descriptor once
	// the tmpfs covers its path.
	fd, err := unix.Open(real, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("hide in %s: %w", dir, err)
	}
	defer unix.Close(fd)
	ents, err := os.ReadDir(real)
	if err != nil {
		return fmt.Errorf("hide in %s: %w", dir, err)
	}
	if err := unix.Mount("tmpfs", real, "tmpfs", unix.MS_NOSUID, "mode=0755"); err != nil {
		return fmt.Errorf("mount a tmpfs on %s: %w", real, err)
	}
	hidden := map[string]bool{}
	for _, n := range names {
		hidden[n] = true
	}
	for _, ent := range ents {
		name := ent.Name()
		if hidden[name] {
			continue
		}
		src := fmt.Sprintf("/proc/self/fd/%d/%s", fd, name)
		dst := filepath.Join(real, name)
		switch {
		case ent.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(src)
			if err != nil {
				return fmt.Errorf("hide in %s: %w", dir, err)
			}
			if err := os.Symlink(target, dst); err != nil {
				return fmt.Errorf("hide in %s: %w", dir, err)
			}
			continue
		case ent.IsDir():
			err = os.Mkdir(dst, 0o755)
		default:
			err = os.WriteFile(dst, nil, 0o600)
		}
		if err != nil {
			return fmt.Errorf("hide in %s: %w", dir, err)
		}
		if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s back: %w", dst, err)
		}
	}
	return nil
}

// The software events a stand-in power PMU counts on (perf_event.h).
const (
	perfTypeSoftware = 1
	swCPUClock       = 0 // nanoseconds the CPU was counted: advances with time
	swDummy          = 9 // never counts
)

// writePowerPMU makes a power PMU at dir (inside a tmpfs hideIn made) on
// the software PMU's type, as the kernel's intel RAPL driver publishes
// one: type, cpumask, format/event, events/NAME with .scale and .unit.
func writePowerPMU(dir string, events []EnergyEvent) error {
	files := map[string]string{
		"type":         fmt.Sprint(perfTypeSoftware),
		"cpumask":      "0",
		"format/event": "config:0-63",
	}
	for _, e := range events {
		cfg := swDummy
		if e.Counts {
			cfg = swCPUClock
		}
		files["events/"+e.Name] = fmt.Sprintf("event=0x%02x", cfg)
		files["events/"+e.Name+".scale"] = "2.3283064365386962890625e-10"
		files["events/"+e.Name+".unit"] = "Joules"
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("stand-in power PMU: %w", err)
		}
		if err := os.WriteFile(p, []byte(content+"\n"), 0o444); err != nil {
			return fmt.Errorf("stand-in power PMU: %w", err)
		}
	}
	return nil
}

// ArchSetCPUID is arch_prctl's ARCH_SET_CPUID
// (arch/x86/include/uapi/asm/prctl.h).
const ArchSetCPUID = 0x1012

// RefuseCPUIDFaulting installs, on every thread of this process and so in
// what it executes, a seccomp filter under which arch_prctl(ARCH_SET_CPUID)
// fails with ENODEV, as the kernel answers where the CPU has no CPUID
// faulting (AMD); every other system call is allowed. It needs
// CAP_SYS_ADMIN (no no_new_privs is set, so set-user-ID programs keep
// working), and checks that the refusal took.
func RefuseCPUIDFaulting() error {
	const (
		nr   = 0  // offsetof(struct seccomp_data, nr)
		arch = 4  // offsetof(struct seccomp_data, arch)
		arg0 = 16 // offsetof(struct seccomp_data, args[0]), low half
	)
	ld := func(off uint32) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off}
	}
	jeq := func(k uint32, skipFalse uint8) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: k, Jf: skipFalse}
	}
	ret := func(k uint32) unix.SockFilter { return unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: k} }
	filter := []unix.SockFilter{
		ld(arch), jeq(unix.AUDIT_ARCH_X86_64, 5), // else allow
		ld(nr), jeq(unix.SYS_ARCH_PRCTL, 3),
		ld(arg0), jeq(ArchSetCPUID, 1),
		ret(unix.SECCOMP_RET_ERRNO | uint32(unix.ENODEV)),
		ret(unix.SECCOMP_RET_ALLOW),
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog))); e != 0 {
		return fmt.Errorf("seccomp: %w", e)
	}
	if _, _, e := unix.Syscall(unix.SYS_ARCH_PRCTL, ArchSetCPUID, 1, 0); e != unix.ENODEV {
		return fmt.Errorf("arch_prctl(ARCH_SET_CPUID) under the filter: %v, want ENODEV", e)
	}
	return nil
}
