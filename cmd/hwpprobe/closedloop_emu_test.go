package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestObserverOutsideClosedLoop: under hwpemu run's closed loop (the
// default) hwpprobe observes from the observer group hwpemu makes beside
// the loop's, while the command it measures runs in the loop's group from
// its first instruction (internal/emuloop, docs/emulator.md "Closed
// loop"); the built-in workload (hwpprobe workload) stays in the loop's
// group, being the work. With --open-loop there is no group and nothing
// moves. The workload prints its own, its parent's (hwpprobe's) and a
// built-in workload step's cpu cgroup.
func TestObserverOutsideClosedLoop(t *testing.T) {
	dir := t.TempDir()
	// A process's group on the cpu controller: cgroup v1's line, else v2's.
	show := `cg() { grep -E '^[0-9]+:([^:]*,)?cpu(,[^:]*)?:' $1 || grep '^0::' $1; }
cg /proc/self/cgroup; cg /proc/$PPID/cgroup
` + hwpprobeBin + ` workload burn 2000000 & p=$!; sleep 0.5; cg /proc/$p/cgroup; kill $p`
	for _, tc := range []struct {
		name  string
		flags []string
		want  *regexp.Regexp
	}{
		{"closed", nil, regexp.MustCompile(`(?m)^\d+:[^:\n]*:/hwpemu-(\d+)\n\d+:[^:\n]*:/hwpemu-(\d+)-observer\n\d+:[^:\n]*:/hwpemu-(\d+)\n`)},
		{"open", []string{"--open-loop"}, regexp.MustCompile(`(?m)^\d+:[^:\n]*:(/[^\n]*)\n\d+:[^:\n]*:(/[^\n]*)\n\d+:[^:\n]*:(/[^\n]*)\n`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"run"}, tc.flags...), "mtl-165u", "--", hwpprobeBin, "record", "-o", filepath.Join(dir, tc.name+".hwpr"), "--",
				"sh", "-c", show)
			b := string(runEmu(t, time.Minute, args...))
			m := tc.want.FindStringSubmatch(b)
			if m == nil || m[1] != m[2] || m[1] != m[3] || (tc.name == "open" && strings.Contains(m[1], "hwpemu-")) {
				t.Errorf("the workload's and hwpprobe's cpu groups: want %s:\n%s", tc.want, b)
			}
		})
	}
}
