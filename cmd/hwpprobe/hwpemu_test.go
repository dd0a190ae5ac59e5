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
