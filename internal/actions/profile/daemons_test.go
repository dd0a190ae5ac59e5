// SPDX-License-Identifier: Apache-2.0

package profile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
)

// TestDetectDaemons reads a fixture /proc: a daemon by comm, a Python
// daemon by its script's name, a truncated comm, and a zombie (not
// running) that is ignored.
func TestDetectDaemons(t *testing.T) {
	root := t.TempDir()
	procs := map[string][3]string{ // pid: comm, stat state, cmdline
		"10": {"thermald", "S", "/usr/sbin/thermald\x00--no-daemon\x00"},
		"11": {"python3", "S", "/usr/bin/python3\x00/usr/sbin/tuned\x00-l\x00"},
		"12": {"power-profiles-", "S", "/usr/libexec/power-profiles-daemon\x00"},
		"13": {"tlp", "Z", ""},
		"14": {"bash", "R", "bash\x00"},
	}
	for pid, p := range procs {
		dir := filepath.Join(root, "proc", pid)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, data := range map[string]string{"comm": p[0] + "\n", "stat": pid + " (" + p[0] + ") " + p[1] + " 1 1 1\n", "cmdline": p[2]} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	var got []string
	running := DetectDaemons(sysfs.NewFS(root))
	for _, r := range running {
		got = append(got, r.Name)
	}
	want := []string{"thermald", "tuned", "power-profiles-daemon"}
	if !cmp.Equal(got, want) {
		t.Errorf("DetectDaemons = %v, want %v", got, want)
	}
	err := CheckDaemons(running, &Profile{Kind: Sysfs}, "--ignore-daemons")
	if !errors.Is(err, ErrDaemon) || !strings.Contains(err.Error(), "thermald (pid 10)") || !strings.Contains(err.Error(), "--ignore-daemons") {
		t.Errorf("CheckDaemons: %v", err)
	}
	if err := CheckDaemons(running[1:2], &Profile{Kind: Tuned}, "--ignore-daemons"); err != nil {
		t.Errorf("tuned: profile with tuned running: %v", err)
	}
}
