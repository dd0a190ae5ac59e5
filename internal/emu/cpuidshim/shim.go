// SPDX-License-Identifier: Apache-2.0

// Package cpuidshim builds the LD_PRELOAD library that lets the kernel's
// own tools (x86_energy_perf_policy, turbostat) run against an emulated
// machine: it answers the CPUID instruction from the machine's
// /dev/cpu/N/cpuid file, through CPUID faulting where the kernel offers it
// (arch_prctl ARCH_SET_CPUID; Intel's cpuid_fault) and otherwise by
// rewriting the program's own CPUID instructions, found here by
// disassembly (Sites), into UD2 and answering the SIGILL. Optionally it
// lets turbostat start where RLIMIT_NOFILE cannot be raised. The C source
// documents the mechanism (csrc/cpuidshim.c).
package cpuidshim

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

//go:embed csrc/cpuidshim.c
var source []byte

// Environment variables the library reads.
const (
	// EnvDevice names the cpuid file CPUID is answered from; a "%d" in it
	// stands for the CPU the thread runs on. Unset, the library does
	// nothing.
	EnvDevice = "HWPEMU_CPUID_DEV"
	// EnvMode forces a path: "fault" or "patch".
	EnvMode = "HWPEMU_CPUID_MODE"
	// EnvSites lists the CPUID instructions of each program the patch
	// path rewrites: PROG=ADDR,ADDR...;PROG=... (hex linked addresses).
	EnvSites = "HWPEMU_CPUID_SITES"
	// EnvRlimitCap, when set, makes setrlimit(RLIMIT_NOFILE) settle for
	// the hard limit instead of failing with EPERM.
	EnvRlimitCap = "HWPEMU_RLIMIT_NOFILE_CAP"
)

// Mode is how the library answers CPUID.
type Mode string

// The library's paths.
const (
	// Auto is faulting where the kernel allows it, else patching.
	Auto Mode = ""
	// Fault is CPUID faulting (arch_prctl ARCH_SET_CPUID).
	Fault Mode = "fault"
	// Patch rewrites the program's CPUID instructions into UD2.
	Patch Mode = "patch"
)

// ErrBadProgram is returned by Env for a program path the site list
// cannot carry (it holds '=' or ';').
var ErrBadProgram = errors.New("program path holds '=' or ';'")

// Modes returns the paths this host can take: Fault where the kernel
// grants CPUID faulting, then Patch, which works everywhere. The probe
// is arch_prctl(ARCH_SET_CPUID, 1), which leaves CPUID enabled, as it
// is, and fails with ENODEV where faulting is missing (AMD).
func Modes() []Mode {
	if _, _, e := unix.Syscall(unix.SYS_ARCH_PRCTL, archSetCPUID, 1, 0); e == 0 {
		return []Mode{Fault, Patch}
	}
	return []Mode{Patch}
}

// archSetCPUID is ARCH_SET_CPUID (arch/x86/include/uapi/asm/prctl.h).
const archSetCPUID = 0x1012

// compiler returns $CC, else cc, else clang (a Debian machine with only
// the eBPF toolchain installed has clang).
func compiler() string {
	if cc := os.Getenv("CC"); cc != "" {
		return cc
	}
	if _, err := exec.LookPath("cc"); err != nil {
		if _, err := exec.LookPath("clang"); err == nil {
			return "clang"
		}
	}
	return "cc"
}

// Build compiles the library with the C compiler ($CC, else cc, else
// clang) into dir and returns its path.
func Build(dir string) (string, error) {
	src := filepath.Join(dir, "cpuidshim.c")
	if err := os.WriteFile(src, source, 0o644); err != nil {
		return "", fmt.Errorf("cpuidshim: %w", err)
	}
	cc := compiler()
	so := filepath.Join(dir, "cpuidshim.so")
	out, err := exec.Command(cc, "-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-o", so, src).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("cpuidshim: %s: %s: %w: %s", src, cc, err, out)
	}
	return so, nil
}

// Env returns the environment entries that load the library at so and
// answer CPUID from the cpuid file dev in mode: for the patch path (Patch,
// or Auto where faulting is refused) the CPUID instructions of progs
// (paths, or names looked up in $PATH) are listed for the library.
func Env(so, dev string, mode Mode, progs ...string) ([]string, error) {
	env := []string{"LD_PRELOAD=" + so, EnvDevice + "=" + dev}
	if mode != Auto {
		env = append(env, EnvMode+"="+string(mode))
	}
	if mode == Fault || len(progs) == 0 {
		return env, nil
	}
	var list []string
	for _, p := range progs {
		entry, err := siteEntry(p)
		if err != nil {
			return nil, err
		}
		list = append(list, entry)
	}
	return append(env, EnvSites+"="+strings.Join(list, ";")), nil
}

// siteEntry returns prog's entry of EnvSites: its path as /proc/self/exe
// names it, '=', its CPUID addresses.
func siteEntry(prog string) (string, error) {
	path, err := exec.LookPath(prog)
	if err != nil {
		return "", fmt.Errorf("cpuidshim: %w", err)
	}
	if path, err = filepath.Abs(path); err == nil {
		path, err = filepath.EvalSymlinks(path)
	}
	if err != nil {
		return "", fmt.Errorf("cpuidshim: %s: %w", prog, err)
	}
	if strings.ContainsAny(path, "=;") {
		return "", fmt.Errorf("cpuidshim: %s: %w", path, ErrBadProgram)
	}
	sites, err := Sites(path)
	if err != nil {
		return "", err
	}
	addrs := make([]string, len(sites))
	for i, s := range sites {
		addrs[i] = fmt.Sprintf("%x", s.Addr)
	}
	return path + "=" + strings.Join(addrs, ","), nil
}
