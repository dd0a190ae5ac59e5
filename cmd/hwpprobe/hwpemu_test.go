// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/testbin"
)

// Shell commands for the scenarios under `hwpemu run --busy 1 mtl-165u`:
// allPerformance switches every CPU to the performance governor, whose
// requests draw 69.4 W (docs/emulator.md); raisePowerLimits raises PL1
// and PL2 to 200 W through powercap, so that nothing limits them.
const (
	allPerformance   = "for f in /sys/devices/system/cpu/cpufreq/policy*/scaling_governor; do echo performance > $f || exit 1; done; "
	raisePowerLimits = "echo 200000000 > /sys/class/powercap/intel-rapl:0/constraint_0_power_limit_uw && " +
		"echo 200000000 > /sys/class/powercap/intel-rapl:0/constraint_1_power_limit_uw || exit 1; "
)

var hwpemuBuild struct {
	sync.Mutex
	path string
}

// hwpemuBin builds hwpemu once for every test of this package that runs
// hwpprobe under an emulated machine, beside the hwpprobe binary TestMain
// built.
func hwpemuBin(t *testing.T) string {
	t.Helper()
	hwpemuBuild.Lock()
	defer hwpemuBuild.Unlock()
	if hwpemuBuild.path == "" {
		b, err := testbin.Build(filepath.Dir(hwpprobeBin), "../hwpemu")
		if err != nil {
			t.Fatal(err)
		}
		hwpemuBuild.path = b
	}
	return hwpemuBuild.path
}

// runEmu runs `hwpemu ARGS...` to its end and returns its combined output;
// hwpemu failing (its command's status) fails the test.
func runEmu(t *testing.T, limit time.Duration, args ...string) []byte {
	t.Helper()
	b, code := emuRun(t, limit, "", nil, args...)
	if code != 0 {
		t.Fatalf("hwpemu %s: exit status %d\n%s", strings.Join(args, " "), code, b)
	}
	return b
}

// emuRun runs `hwpemu ARGS...` to its end, in dir (unless empty) with env
// added to the environment, and returns its combined output and exit
// status. The bound is for an emulator that hangs (a FUSE server that
// stops answering), so that the suite fails instead of blocking.
func emuRun(t *testing.T, limit time.Duration, dir string, env []string, args ...string) ([]byte, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, hwpemuBin(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second
	b, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("hwpemu %s did not end within %v\n%s", strings.Join(args, " "), limit, b)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return b, ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("hwpemu %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return b, 0
}
