// SPDX-License-Identifier: Apache-2.0

package buildlike

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The test binary doubles as the step process: BUILDLIKE_TEST_BURN=1 makes
// it burn the units given as its last argument and exit.
func TestMain(m *testing.M) {
	if os.Getenv("BUILDLIKE_TEST_BURN") == "1" {
		u, err := strconv.Atoi(os.Args[len(os.Args)-1])
		if err != nil || u < 0 {
			os.Exit(3)
		}
		Burn(u)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestPlanDeterministic(t *testing.T) {
	a, err := NewPlan(Config{Seed: 5, Size: 20000, Jobs: 4})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewPlan(Config{Seed: 5, Size: 20000, Jobs: 16})
	if d := cmp.Diff(a.Phases, b.Phases); d != "" {
		t.Errorf("the plan depends on the job limit:\n%s", d)
	}
	c, _ := NewPlan(Config{Seed: 6, Size: 20000, Jobs: 4})
	if cmp.Equal(a.Phases, c.Phases) {
		t.Error("seeds 5 and 6 give the same plan")
	}
	for _, p := range []Plan{a, c} {
		if p.Units() != 20000 {
			t.Errorf("seed %d: %d units, want exactly the size 20000", p.Config.Seed, p.Units())
		}
	}
}

func TestPlanShape(t *testing.T) {
	p, err := NewPlan(Config{Jobs: 12})
	if err != nil {
		t.Fatal(err)
	}
	var compiles, links, idles, maxUnits, minUnits = 0, 0, 0, 0, 1 << 30
	for _, ph := range p.Phases {
		for _, s := range ph.Steps {
			switch s.Kind {
			case KindCompile:
				compiles++
				maxUnits, minUnits = max(maxUnits, s.Units), min(minUnits, s.Units)
				if !ph.Parallel {
					t.Errorf("%s: compile step in a serial phase", ph.Name)
				}
			case KindLink:
				links++
			case KindIdle:
				idles++
			}
		}
	}
	if compiles < 500 || links < 2 || idles != links || maxUnits < 8*minUnits {
		t.Errorf("default plan: %d compiles (units %d..%d), %d links, %d idle gaps; want many varied compiles, serial links and gaps",
			compiles, minUnits, maxUnits, links, idles)
	}
	t.Log(p)
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []Config{{Jobs: 0}, {Jobs: 2, Size: -1}} {
		if _, err := NewPlan(c); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: error %v, want ErrConfig", c, err)
		}
	}
}

// TestRunJobLimit runs a plan with a fake spawn and checks that every unit
// is done once and that no more than the job limit run at once, and only
// one in serial phases.
func TestRunJobLimit(t *testing.T) {
	p, _ := NewPlan(Config{Seed: 3, Size: 3000, Jobs: 3})
	var mu sync.Mutex
	running, peak, units := 0, 0, 0
	spawn := func(ctx context.Context, u int) error {
		mu.Lock()
		running++
		peak = max(peak, running)
		units += u
		mu.Unlock()
		time.Sleep(50 * time.Microsecond)
		mu.Lock()
		running--
		mu.Unlock()
		return nil
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := Run(ctx, p, spawn); err != nil {
		t.Fatal(err)
	}
	if units != 3000 || peak > 3 {
		t.Errorf("%d units done, peak concurrency %d; want 3000 and at most 3", units, peak)
	}
}

func TestRunStopsOnFailure(t *testing.T) {
	p, _ := NewPlan(Config{Seed: 3, Size: 3000, Jobs: 2})
	var started atomic.Int32
	boom := errors.New("boom")
	spawn := func(ctx context.Context, u int) error {
		if started.Add(1) == 5 {
			return boom
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := Run(ctx, p, spawn); !errors.Is(err, boom) {
		t.Errorf("error %v, want the failing step's", err)
	}
	if n := started.Load(); n > 7 {
		t.Errorf("%d steps started, want none after the failure but the running ones", n)
	}
}

func TestExecSpawn(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("BUILDLIKE_TEST_BURN", "1")
	p, _ := NewPlan(Config{Seed: 2, Size: 200, Jobs: 2})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if err := Run(ctx, p, ExecSpawn(os.Stderr, exe)); err != nil {
		t.Fatal(err)
	}
	if err := Run(ctx, p, ExecSpawn(os.Stderr, filepath.Join(t.TempDir(), "missing"))); err == nil {
		t.Error("a failing step process: no error")
	}
}

func TestBurnDeterministic(t *testing.T) {
	a, b, c := Burn(2), Burn(2), Burn(3)
	if a != b || a == c {
		t.Error("Burn is not a function of its units")
	}
}
