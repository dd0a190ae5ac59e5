// SPDX-License-Identifier: Apache-2.0

package testbin

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/hwpprobe/hwpprobe/internal/emu/cpuidshim"
)

// PeerToolNames are the kernel's tools (Debian linux-cpupower) the peer
// checks run against emulated machines.
var PeerToolNames = []string{"turbostat", "x86_energy_perf_policy"}

// Peer is how a test runs the kernel's turbostat and
// x86_energy_perf_policy against an emulated machine on one of the CPUID
// library's paths.
type Peer struct {
	// Mode is the CPUID path: cpuidshim.Fault or cpuidshim.Patch.
	Mode cpuidshim.Mode
	// Tools are the tools' absolute paths, by name.
	Tools map[string]string
	// Env loads the CPUID library (answering from the emulated
	// /dev/cpu/0/cpuid, with the tools' CPUID instructions listed for
	// the patch path, RLIMIT_NOFILE capped) and the preload libraries
	// PeerTools was given.
	Env []string
}

// PeerTools finds turbostat and x86_energy_perf_policy (the test fails if
// one is missing), builds the CPUID library and returns one Peer per
// CPUID path this host can take: faulting where the kernel grants it
// (Intel's cpuid_fault), patching on every host. preload are further
// LD_PRELOAD libraries for the tools.
//
// The file is CPU 0's whatever CPU the tool runs on: the host's CPU
// numbers need not exist in the emulated machine.
func PeerTools(t testing.TB, preload ...string) []Peer {
	t.Helper()
	tools := map[string]string{}
	for _, name := range PeerToolNames {
		path, err := exec.LookPath(name)
		if err != nil {
			path = "/usr/sbin/" + name
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("%s not installed (apt-get install linux-cpupower; scripts/install-deps.sh): %v", name, err)
			}
		}
		tools[name] = path
	}
	so, err := cpuidshim.Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var peers []Peer
	for _, mode := range cpuidshim.Modes() {
		env, err := cpuidshim.Env(so, "/dev/cpu/0/cpuid", mode, tools["turbostat"], tools["x86_energy_perf_policy"])
		if err != nil {
			t.Fatal(err)
		}
		for i, kv := range env {
			if strings.HasPrefix(kv, "LD_PRELOAD=") {
				env[i] = "LD_PRELOAD=" + strings.Join(append([]string{so}, preload...), " ")
			}
		}
		env = append(env, cpuidshim.EnvRlimitCap+"=1")
		peers = append(peers, Peer{Mode: mode, Tools: tools, Env: env})
	}
	return peers
}

// Run runs f as the subtest named after p's CPUID path, which it logs.
func (p Peer) Run(t *testing.T, f func(t *testing.T)) bool {
	t.Helper()
	return t.Run(string(p.Mode), func(t *testing.T) {
		t.Logf("CPUID path: %s (%s=%s)", p.Mode, cpuidshim.EnvMode, p.Mode)
		f(t)
	})
}
