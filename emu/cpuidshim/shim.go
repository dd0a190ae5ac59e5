// Package cpuidshim builds the LD_PRELOAD library that lets the kernel's
// own tools (x86_energy_perf_policy, turbostat) run against an emulated
// machine: it answers the CPUID instruction from the machine's
// /dev/cpu/N/cpuid file through CPUID faulting (arch_prctl ARCH_SET_CPUID;
// the CPU needs the cpuid_fault flag) and, optionally, lets turbostat start
// where RLIMIT_NOFILE cannot be raised. The C source documents
// the mechanism (csrc/cpuidshim.c).
package cpuidshim

import (
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

//go:embed csrc/cpuidshim.c
var source []byte

// Environment variables the library reads.
const (
	// EnvDevice names the cpuid file CPUID is answered from; unset, the
	// library does nothing.
	EnvDevice = "HWPEMU_CPUID_DEV"
	// EnvRlimitCap, when set, makes setrlimit(RLIMIT_NOFILE) settle for
	// the hard limit instead of failing with EPERM.
	EnvRlimitCap = "HWPEMU_RLIMIT_NOFILE_CAP"
)

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
		return "", fmt.Errorf("cpuidshim: %s: %w: %s", cc, err, out)
	}
	return so, nil
}

// Env returns the environment entries that load the library at so and
// answer CPUID from the cpuid file dev.
func Env(so, dev string) []string {
	return []string{"LD_PRELOAD=" + so, EnvDevice + "=" + dev}
}
