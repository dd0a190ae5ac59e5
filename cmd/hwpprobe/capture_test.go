// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hwpprobe/hwpprobe/internal/emu"
)

// Bad output paths: one line, the right status, nothing created or
// replaced.
func TestCaptureOutputErrors(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "old.yaml")
	if err := os.WriteFile(existing, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		out  string
		code int
		msg  string
	}{
		{"/proc/hwpprobe-capture.yaml", 1, "hwpprobe: capture: cannot create /proc/hwpprobe-capture.yaml"},
		{filepath.Join(dir, "no-such-dir", "m.yaml"), 1, "hwpprobe: capture: cannot create"},
		{dir, 2, "hwpprobe: capture: " + dir + " is a directory"},
		{"/dev/null", 2, "hwpprobe: capture: /dev/null is not a regular file"},
		{existing, 1, "hwpprobe: capture: " + existing + " exists (use --force to replace it)"},
		{"", 2, "hwpprobe: capture: -o FILE is required"},
	} {
		_, stderr, code := runBin(t, "capture", "-o", tc.out)
		if code != tc.code || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, tc.msg) {
			t.Errorf("capture -o %q: exit %d, stderr %q; want %d and one line starting %q", tc.out, code, stderr, tc.code, tc.msg)
		}
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep me\n" {
		t.Errorf("existing file changed: %q", b)
	}
	if _, err := os.Stat("/proc/hwpprobe-capture.yaml"); err == nil {
		t.Error("a file appeared in /proc")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("%s holds %d entries after failed captures, want only old.yaml", dir, len(ents))
	}
	if _, stderr, code := runBin(t, "capture", "-o", filepath.Join(dir, "x.yaml"), "-C", "0-x"); code != 2 || !strings.Contains(stderr, "bad CPU list") {
		t.Errorf("capture -C 0-x: exit %d, %q", code, stderr)
	}
}

// Without root the devices cannot be read: capture says so in one line on
// stderr and in the description, and still writes what it could read.
func TestCaptureNotRoot(t *testing.T) {
	cmd, dir := nobodyCmd(t, "capture", "-o", "m.yaml")
	var o, e stringsBuilder
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("capture as nobody: %v\n%s", err, e.String())
	}
	stderr := e.String()
	const cpuid = "dev/cpu/*/cpuid: CPUs 0-"
	if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "hwpprobe: capture: could not read") ||
		!strings.Contains(stderr, cpuid) || !strings.Contains(stderr, "permission denied") {
		t.Errorf("stderr %q: want one line naming %s ... permission denied", stderr, cpuid)
	}
	data, err := emu.ReadDescriptionFile(filepath.Join(dir, "m.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := emu.ParseDescription(data)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, u := range d.Unreadable {
		found = found || u.Path == "dev/cpu/*/cpuid" && strings.Contains(u.Error, "permission denied")
	}
	if !found || d.Captured.EUID != 65534 || len(d.CPUID) != 0 || len(d.Files) == 0 {
		t.Errorf("description: unreadable %v, euid %d, %d CPUID entries, %d files: want the cpuid device listed as unreadable and no leaves",
			d.Unreadable, d.Captured.EUID, len(d.CPUID), len(d.Files))
	}
}
