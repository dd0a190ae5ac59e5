// SPDX-License-Identifier: Apache-2.0

// Package buildlike is hwpprobe diff's built-in workload: a seeded,
// deterministic job shaped like `make -j$(nproc)` building a kernel. It is
// a fixed amount of compute work, split into many short-lived processes
// run through a job limit, with
//
//   - compile steps: one process each, of varied length (lognormal, as
//     translation units are: most short, a few long);
//   - link steps: one long process running alone after each directory's
//     compile steps, while the other cores idle (the serial phases);
//   - idle gaps: a short wait between directories, with no process
//     running (as a build waits on the disk or a configure script).
//
// The same seed and size give the same plan (the same steps with the same
// work, started in the same order) on every machine; only the time it
// takes depends on the machine and its settings. The work of a step is
// Burn(units): integer mixing over a 256 KiB buffer, one unit about half
// a millisecond of one core.
package buildlike

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
	"github.com/hwpprobe/hwpprobe/internal/sigquit"
)

// Defaults.
const (
	DefaultSeed = 1
	// DefaultSize is the total work in units: about 20 CPU-seconds, a few
	// seconds of wall time on a 12-CPU laptop.
	DefaultSize = 40000
	// The plan's shape: mean compile step, the links' share of the work,
	// the number of directories, the idle gap after each.
	meanCompileUnits = 60 // mean of a compile step
	linkShare        = 0.06
	minDirs          = 2
	maxDirs          = 12
	idleGap          = 30 * time.Millisecond
)

// Kinds of steps.
const (
	KindCompile = "compile"
	KindLink    = "link"
	KindIdle    = "idle"
)

// Config chooses the job.
type Config struct {
	Seed uint64 // 0: DefaultSeed
	Size int    // total work units; 0: DefaultSize
	Jobs int    // job limit, like make -j; required (> 0)
}

// ErrConfig reports an unusable configuration.
var ErrConfig = errors.New("buildlike")

// Step is one thing the job does.
type Step struct {
	Kind  string
	Units int           // compile and link: work in units
	Idle  time.Duration // idle: how long nothing runs
}

// Phase is a set of steps: a parallel phase runs its steps through the job
// limit, a serial one runs them one after another.
type Phase struct {
	Name     string
	Parallel bool
	Steps    []Step
}

// Plan is the whole job.
type Plan struct {
	Config Config
	Phases []Phase
}

// Units returns the plan's total work.
func (p Plan) Units() int {
	n := 0
	for _, ph := range p.Phases {
		for _, s := range ph.Steps {
			n += s.Units
		}
	}
	return n
}

// Processes returns how many processes the plan starts.
func (p Plan) Processes() int {
	n := 0
	for _, ph := range p.Phases {
		for _, s := range ph.Steps {
			if s.Kind != KindIdle {
				n++
			}
		}
	}
	return n
}

func (c Config) withDefaults() (Config, error) {
	if c.Seed == 0 {
		c.Seed = DefaultSeed
	}
	if c.Size == 0 {
		c.Size = DefaultSize
	}
	switch {
	case c.Size < 0:
		return c, fmt.Errorf("%w: size %d is negative", ErrConfig, c.Size)
	case c.Jobs <= 0:
		return c, fmt.Errorf("%w: job limit %d must be positive", ErrConfig, c.Jobs)
	}
	return c, nil
}

// NewPlan builds the plan of a configuration: Size units split into
// directories, each a parallel compile phase, a serial link and an idle
// gap. The plan depends on Seed and Size only, not on Jobs.
func NewPlan(c Config) (Plan, error) {
	c, err := c.withDefaults()
	if err != nil {
		return Plan{}, err
	}
	rng := rand.New(rand.NewPCG(c.Seed, uint64(c.Size)))
	dirs := min(maxDirs, max(minDirs, c.Size/5000))
	p := Plan{Config: c}
	left := c.Size
	for d := range dirs {
		share := left / (dirs - d)
		link := int(float64(share) * linkShare)
		compile := share - link
		name := fmt.Sprintf("dir%d", d+1)
		p.Phases = append(p.Phases,
			Phase{Name: name + " compile", Parallel: true, Steps: compileSteps(rng, compile)},
			Phase{Name: name + " link", Steps: []Step{{Kind: KindLink, Units: link}}},
			Phase{Name: name + " wait", Steps: []Step{{Kind: KindIdle, Idle: idleGap}}})
		left -= share
	}
	return p, nil
}

// compileSteps splits units into steps of lognormal size (median about
// two thirds of the mean; a few 5-10 times the mean).
func compileSteps(rng *rand.Rand, units int) []Step {
	var steps []Step
	for units > 0 {
		u := int(math.Round(meanCompileUnits * math.Exp(0.9*rng.NormFloat64()-0.405)))
		u = min(max(u, 1), units)
		steps = append(steps, Step{Kind: KindCompile, Units: u})
		units -= u
	}
	return steps
}

// Spawn runs one step's work as a process and waits for it.
type Spawn func(ctx context.Context, units int) error

// Run executes the plan: each phase's steps through the job limit (all of
// a phase's steps end before the next phase starts, as make's
// dependencies order a link after its objects). The first failing step
// stops the job: no step starts after it, and Run returns its error once
// the running ones have ended.
func Run(ctx context.Context, p Plan, spawn Spawn) error {
	for _, ph := range p.Phases {
		jobs := 1
		if ph.Parallel {
			jobs = p.Config.Jobs
		}
		if err := runPhase(ctx, ph, jobs, spawn); err != nil {
			return fmt.Errorf("%s: %w", ph.Name, err)
		}
	}
	return nil
}

// RunUntilStopped is Run for `hwpprobe workload`, whose parent (diff,
// or a user at a terminal) stops it with SIGINT or SIGTERM: either
// cancels the job (no step starts after it; the running ones end).
func RunUntilStopped(ctx context.Context, p Plan, spawn Spawn) error {
	ctx, stop := sigquit.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return Run(ctx, p, spawn)
}

func runPhase(ctx context.Context, ph Phase, jobs int, spawn Spawn) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	for _, s := range ph.Steps {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := runStep(ctx, s, spawn); err != nil {
				cancel(err)
			}
		}()
	}
	wg.Wait()
	return context.Cause(ctx)
}

func runStep(ctx context.Context, s Step, spawn Spawn) error {
	if s.Kind == KindIdle {
		t := time.NewTimer(s.Idle)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return spawn(ctx, s.Units)
}

// ExecSpawn runs each step as the process argv followed by the step's
// units as one more argument (the hwpprobe binary runs `hwpprobe workload
// burn UNITS`). Its output is discarded, its errors go to stderr.
func ExecSpawn(stderr io.Writer, argv ...string) Spawn {
	return func(ctx context.Context, units int) error {
		args := append(slices.Clone(argv[1:]), strconv.Itoa(units))
		cmd := exec.CommandContext(ctx, argv[0], args...)
		cmd.Stderr = stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("step of %d units: %w", units, err)
		}
		return nil
	}
}

// Command is the command line that runs the job with the hwpprobe binary
// exe: `exe workload buildlike --seed S --size N --jobs J`.
func Command(exe string, c Config) ([]string, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	return []string{exe, "workload", "buildlike", "--seed", strconv.FormatUint(c.Seed, 10),
		"--size", strconv.Itoa(c.Size), "--jobs", strconv.Itoa(c.Jobs)}, nil
}

// String describes the plan in one line.
func (p Plan) String() string {
	steps := 0
	for _, ph := range p.Phases {
		steps += len(ph.Steps)
	}
	return fmt.Sprintf("built-in build-like job: seed %d, %d work units in %d processes (%d phases), -j%d",
		p.Config.Seed, p.Units(), p.Processes(), len(p.Phases), p.Config.Jobs)
}

// DefaultJobs is the job limit of the built-in workload on the system at
// root: make -j$(nproc) of the machine hwpprobe measures. On an emulated
// machine (hwpemu; sysfs.EmulatedMarker under root) that is its online
// CPUs, not the host's; otherwise the CPUs this process may run on.
func DefaultJobs(root string) int {
	if root == "" {
		root = "/"
	}
	if sysfs.NewFS(root).Emulated() != "" {
		if l, err := sysfs.NewFS(root).OnlineCPUs(); err == nil && len(l) > 0 {
			return len(l)
		}
	}
	return runtime.NumCPU()
}
