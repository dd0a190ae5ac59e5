// SPDX-License-Identifier: Apache-2.0

// Command load is bench/observer/run.sh's workload: JOBS goroutines each
// doing UNITS of buildlike.Burn's fixed compute work (CPU-bound, no I/O),
// timed from the inside so that a recorder's start-up and wind-down are
// not in the time:
//
//	load -units 2000 -jobs 2 -o times.txt [-cpu cpu.txt] [-parent obs.txt]
//
// -o appends the workload's wall time in seconds, -cpu its own CPU time
// (user + system, getrusage) in seconds. -parent appends the CPU
// time its parent process (the recorder, `hwpprobe record -- load ...`)
// used while the workload ran and the workload's wall time, both in
// seconds: the sum of /proc/PPID/task/*/schedstat's first field (time on
// a CPU, ns) at the end minus at the start.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/actions/workload/buildlike"
)

func main() {
	units := flag.Int("units", 2000, "work units per job (one is about half a millisecond of one core)")
	jobs := flag.Int("jobs", runtime.NumCPU(), "goroutines, each doing -units")
	out := flag.String("o", "", "append the wall time (s) to this file")
	cpu := flag.String("cpu", "", "append the workload's own CPU time (s) to this file")
	parent := flag.String("parent", "", "append the parent's CPU time and the wall time (s) to this file")
	flag.Parse()
	if *out == "" || *units < 1 || *jobs < 1 || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: load -units N -jobs J -o FILE [-parent FILE]")
		os.Exit(2)
	}
	if err := run(*units, *jobs, *out, *cpu, *parent); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

func run(units, jobs int, out, cpu, parent string) error {
	ppid := os.Getppid()
	var cpu0 time.Duration
	if parent != "" {
		var err error
		if cpu0, err = taskTime(ppid); err != nil {
			return err
		}
	}
	start := time.Now()
	var wg sync.WaitGroup
	sums := make([]uint64, jobs)
	for j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sums[j] = buildlike.Burn(units)
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	if err := appendLine(out, fmt.Sprintf("%.6f", wall.Seconds())); err != nil {
		return err
	}
	if cpu != "" {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			return fmt.Errorf("getrusage: %w", err)
		}
		used := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		if err := appendLine(cpu, fmt.Sprintf("%.6f", used.Seconds())); err != nil {
			return err
		}
	}
	if parent == "" {
		return nil
	}
	cpu1, err := taskTime(ppid)
	if err != nil {
		return err
	}
	return appendLine(parent, fmt.Sprintf("%.6f %.6f", (cpu1-cpu0).Seconds(), wall.Seconds()))
}

// taskTime sums the time on a CPU of every thread of process pid
// (/proc/PID/task/TID/schedstat, first field, ns).
func taskTime(pid int) (time.Duration, error) {
	paths, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(paths) == 0 {
		return 0, fmt.Errorf("process %d: no /proc/%d/task/*/schedstat", pid, pid)
	}
	var sum time.Duration
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) { // a thread that just exited
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("process %d: %w", pid, err)
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			return 0, fmt.Errorf("%s: empty", p)
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", p, err)
		}
		sum += time.Duration(ns)
	}
	return sum, nil
}

func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(f, line); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}
