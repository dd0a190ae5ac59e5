// SPDX-License-Identifier: Apache-2.0

package recording

import (
	"os/exec"
	"testing"

	"golang.org/x/sys/unix"
)

// mountTmpfs mounts a tmpfs of the given size on a temporary directory (the
// tests run as root, as in CI) and unmounts it at the end of the test.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs (tests run as root): %v: %s", err, out)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	return dir
}
