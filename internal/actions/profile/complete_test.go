// SPDX-License-Identifier: Apache-2.0

package profile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
)

func TestComplete(t *testing.T) {
	govs := []string{"performance", "powersave"}
	tests := []struct {
		prefix  string
		want    []string
		partial bool
	}{
		{"pow", []string{"powersave", "powersave:"}, true},
		{"cur", []string{"current"}, false},
		{"ppd:", []string{"ppd:power-saver", "ppd:balanced", "ppd:performance"}, false},
		{"ppd:b", []string{"ppd:balanced"}, false},
		{"powersave:epp=", []string{"powersave:epp=default", "powersave:epp=performance", "powersave:epp=balance_performance", "powersave:epp=balance_power", "powersave:epp=power"}, false},
		{"powersave:epp=balance_p", []string{"powersave:epp=balance_performance", "powersave:epp=balance_power"}, false},
		{"powersave:e", []string{"powersave:epp=", "powersave:epb="}, true},
		{"powersave:g", nil, true},
		{"epp=power,epb=b", []string{"epp=power,epb=balance-performance", "epp=power,epb=balance-power"}, false},
		{"epp=power,g", []string{"epp=power,governor="}, true},
		{"governor=p", []string{"governor=performance", "governor=powersave"}, false},
		{"no_turbo=", []string{"no_turbo=0", "no_turbo=1"}, false},
		{"tuned:", nil, false},
		{"@", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			got, partial := Complete(tt.prefix, govs)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Complete(%q) (-want +got):\n%s", tt.prefix, diff)
			}
			if partial != tt.partial && len(got) > 0 {
				t.Errorf("Complete(%q) partial = %v, want %v", tt.prefix, partial, tt.partial)
			}
		})
	}
}

// TestCompleteParses requires every whole candidate, from the empty
// prefix down through every partial one, to be a profile Parse accepts,
// and every partial one to be the beginning of one.
func TestCompleteParses(t *testing.T) {
	govs := []string{"performance", "powersave", "schedutil"}
	seen := map[string]bool{}
	queue := []string{""}
	for len(queue) > 0 && len(seen) < 5000 {
		prefix := queue[0]
		queue = queue[1:]
		cands, _ := Complete(prefix, govs)
		for _, c := range cands {
			if seen[c] {
				continue
			}
			seen[c] = true
			if strings.HasSuffix(c, ":") || strings.HasSuffix(c, "=") {
				queue = append(queue, c)
				continue
			}
			if _, err := Parse(c); err != nil {
				t.Errorf("candidate %q (after %q): %v", c, prefix, err)
			}
		}
	}
	if len(seen) < 30 {
		t.Errorf("only %d candidates reached", len(seen))
	}
}

func TestGovernors(t *testing.T) {
	dir := t.TempDir()
	if got := Governors(sysfs.NewFS(dir)); !cmp.Equal(got, DefaultGovernors) {
		t.Errorf("no cpufreq: %v, want %v", got, DefaultGovernors)
	}
	p := filepath.Join(dir, cpuSysfs, "cpu0/cpufreq/scaling_available_governors")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	// acpi-cpufreq's list, as the kernel prints it (a space at the end).
	if err := os.WriteFile(p, []byte("conservative ondemand userspace powersave performance schedutil \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []string{"conservative", "ondemand", "userspace", "powersave", "performance", "schedutil"}
	if got := Governors(sysfs.NewFS(dir)); !cmp.Equal(got, want) {
		t.Errorf("acpi-cpufreq: %v, want %v", got, want)
	}
}
