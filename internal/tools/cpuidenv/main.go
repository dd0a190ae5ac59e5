// SPDX-License-Identifier: Apache-2.0

// Command cpuidenv builds the CPUID library (emu/cpuidshim) into a
// directory and prints, one per line, the environment entries that let
// the named programs run against an emulated machine's /dev/cpu/0/cpuid on
// any host: on hosts without CPUID faulting (AMD) the library patches the
// programs' CPUID instructions, which it must be told (HWPEMU_CPUID_SITES,
// found here by disassembly). bench/sampler/run.sh uses it for turbostat;
// docs/hwpemu.md shows it by hand.
//
// Usage: go run ./internal/tools/cpuidenv DIR PROG...
package main

import (
	"fmt"
	"os"

	"github.com/hwpprobe/hwpprobe/internal/emu/cpuidshim"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: cpuidenv DIR PROG...")
		os.Exit(2)
	}
	so, err := cpuidshim.Build(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "cpuidenv:", err)
		os.Exit(1)
	}
	env, err := cpuidshim.Env(so, "/dev/cpu/0/cpuid", cpuidshim.Auto, os.Args[2:]...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cpuidenv:", err)
		os.Exit(1)
	}
	for _, kv := range append(env, cpuidshim.EnvRlimitCap+"=1") {
		fmt.Println(kv)
	}
}
