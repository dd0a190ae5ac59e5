// SPDX-License-Identifier: Apache-2.0

package buildlike

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestDefaultJobs: on an emulated machine (the hwpemu marker present) the
// built-in workload runs as many jobs as the machine has online CPUs,
// not the host's; elsewhere the CPUs this process may use.
func TestDefaultJobs(t *testing.T) {
	put := func(root, p, s string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	emulated, offline, real := t.TempDir(), t.TempDir(), t.TempDir()
	put(emulated, "sys/devices/system/cpu/hwpemu_machine", "mtl-165u\n")
	put(emulated, "sys/devices/system/cpu/online", "0-13\n")
	put(offline, "sys/devices/system/cpu/hwpemu_machine", "x\n")
	put(offline, "sys/devices/system/cpu/online", "0,2-5,7\n")
	put(real, "sys/devices/system/cpu/online", "0-63\n")
	for _, tc := range []struct {
		name, root string
		want       int
	}{
		{"emulated mtl-165u", emulated, 14}, {"emulated, some offline", offline, 6}, {"real hardware", real, runtime.NumCPU()},
	} {
		if got := DefaultJobs(tc.root); got != tc.want {
			t.Errorf("%s: DefaultJobs = %d, want %d", tc.name, got, tc.want)
		}
	}
}
