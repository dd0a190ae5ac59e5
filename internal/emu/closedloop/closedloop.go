// SPDX-License-Identifier: Apache-2.0

// Package closedloop holds a command's CPU time to what an emulated
// machine delivers: the command runs in its own cgroup (internal/kernel/cgroup);
// every Interval the loop measures the CPU time of the group's threads,
// places them on the emulated CPUs, sets those CPUs' busy fractions in the
// model (emu.VarLoad) and limits the group's CPU bandwidth to what the
// busy emulated CPUs deliver at their modelled frequencies. One host CPU
// fully used stands for one emulated CPU at the reference frequency, the
// fastest frequency the machine can deliver. docs/emulator.md ("Closed
// loop") gives the equations.
package closedloop

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/emu"
	"github.com/hwpprobe/hwpprobe/internal/emu/emuloop"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cgroup"
	"github.com/hwpprobe/hwpprobe/internal/kernel/procstat"
)

// Interval is how often the loop measures the command and sets its quota.
const Interval = 100 * time.Millisecond

// quotaStep is the relative change below which the quota is left as it
// is: writing it refills the group's runtime for the current period.
const quotaStep = 0.02

// headroom multiplies the busy fraction of a CPU a live process is on, in
// the quota, so that a process whose use grows can double it from one
// interval to the next (the quota is a cap the group's threads share,
// never a reservation).
const headroom = 2

// busyThread: a thread counts toward a process's runnable threads only if
// it used at least 1/busyThread of what its busiest thread used in the
// interval: a helper thread that merely woke up (and waits, runnable,
// while the group is throttled) does not make the process use two CPUs.
const busyThread = 4

// Proc is one live process's use of the host over an interval.
type Proc struct {
	Use      float64 // host CPUs: CPU-seconds of all its threads per second
	Runnable int     // its busy threads running or waiting to run when sampled
}

// Place returns the busy fraction of each of the online emulated CPUs
// whose delivered frequencies over the interval were freqs (MHz), and
// which of them a live process is on, for the live processes procs and
// the processes that ended within the interval, which used rest host CPUs
// together. One host CPU is one emulated CPU at ref MHz: a CPU at f holds
// f / ref host CPUs of work, and work w on it keeps it busy w x ref / f,
// at most 1.
//
// Placement: the processes that ran, busiest first (equal ones in the
// order given), each on as many CPUs as it had threads runnable when
// sampled (at least one), its use split evenly over them, in the order of
// freqs; once every CPU is taken, the next processes wrap around and
// share them. The ended work then fills the CPUs' remaining capacity from
// the first CPU on; what does not fit is dropped. Counting a process's
// runnable threads, not the threads that ran, keeps one busy task that a
// runtime moves between threads (Go's does) on one CPU.
func Place(procs []Proc, rest float64, freqs []float64, ref float64) (busy []float64, live []bool) {
	n := len(freqs)
	busy, live = make([]float64, n), make([]bool, n)
	if n == 0 || ref <= 0 {
		return busy, live
	}
	order := slices.Clone(procs)
	slices.SortStableFunc(order, func(a, b Proc) int { return cmp.Compare(b.Use, a.Use) })
	work := make([]float64, n) // host CPUs of work per emulated CPU
	k := 0
	for _, p := range order {
		if p.Use <= 0 {
			break
		}
		m := min(n, max(1, p.Runnable))
		for range m {
			work[k%n] += p.Use / float64(m)
			live[k%n] = true
			k++
		}
	}
	for c := 0; c < n && rest > 0; c++ {
		add := min(max(freqs[c]/ref-work[c], 0), rest)
		work[c] += add
		rest -= add
	}
	for c := range busy {
		if freqs[c] > 0 {
			busy[c] = min(1, work[c]*ref/freqs[c])
		}
	}
	return busy, live
}

// Quota is the group's CPU bandwidth, in host CPUs, for online CPUs busy
// the fractions busy at frequencies freqs (MHz), live[c] when a live
// process is on CPU c:
//
//	quota = min(hostCPUs, max(freqs[0] / ref, Σ min(1, h[c] x busy[c]) x freqs[c] / ref))
//
// with h[c] = 2 (headroom) on a CPU a live process is on, 1 on one only
// ended work filled. Each busy CPU lets the work on it proceed at its
// frequency, a live process with room to double its use; the first CPU's
// capacity is the least the group gets (so that a thread waking on an
// idle machine runs, on the CPU Place puts it on); the host's CPUs cap
// it.
func Quota(busy []float64, live []bool, freqs []float64, ref float64, hostCPUs int) float64 {
	if len(freqs) == 0 || ref <= 0 {
		return float64(hostCPUs)
	}
	q := 0.0
	for c, b := range busy {
		h := 1.0
		if live[c] {
			h = headroom
		}
		q += min(1, h*b) * freqs[c] / ref
	}
	return min(float64(hostCPUs), max(freqs[0]/ref, q))
}

// Loop is the control loop of one command's group.
type Loop struct {
	g        *cgroup.Group
	observer *cgroup.Group // where a program observing the command moves itself; nil: none
	m        *emu.Machine
	load     *emu.VarLoad
	hostCPUs int
	proc     string // procfs whose /TID/schedstat the group's thread ids name

	ref    float64 // MHz of an emulated CPU that one host CPU stands for
	online []int   // online emulated CPUs
	maxSum float64 // Σ over online CPUs of their highest MHz / ref
	// slowdown is how much slower than the model the whole machine runs
	// (1 where the host has the CPUs the emulated ones need at their
	// highest): ref is the fastest CPU's highest frequency times it.
	slowdown float64

	mu        sync.Mutex
	freqs     []float64 // online CPUs' delivered MHz over the current interval
	quota     float64   // host CPUs
	prevT     time.Time
	prevUsage time.Duration
	prevRun   map[int]time.Duration // run time per live thread id
}

// New makes the loop of group g for machine m, whose load source must be
// load, on a host with hostCPUs CPUs the command may use, and sets the
// group's first quota. Thread ids in the group are looked up in proc
// (normally "/proc", of the PID namespace that reads the group). observer,
// when not nil, is the group, outside g, that a program observing the
// command moves itself to (hwpemu run's own; Info names it;
// internal/emu/emuloop).
func New(g, observer *cgroup.Group, m *emu.Machine, load *emu.VarLoad, hostCPUs int, proc string) (*Loop, error) {
	l := &Loop{g: g, observer: observer, m: m, load: load, hostCPUs: max(1, hostCPUs), proc: proc, prevRun: map[int]time.Duration{}}
	fr := m.Frequencies()
	for _, f := range fr {
		if f.Online {
			l.online = append(l.online, f.CPU)
			l.ref = max(l.ref, f.MaxMHz)
		}
	}
	if l.ref <= 0 {
		return nil, fmt.Errorf("closed loop: %s delivers no frequency", m.Name())
	}
	for _, c := range l.online {
		l.maxSum += fr[c].MaxMHz / l.ref
	}
	// A machine that needs more host CPUs than there are, at its highest,
	// runs uniformly slower, so that what each setting delivers keeps its
	// ratio to every other's whatever the number of busy CPUs; a cap at
	// the host's CPUs instead would give every setting the same CPU time
	// once more CPUs are busy than the host has.
	l.slowdown = max(1, l.maxSum/float64(l.hostCPUs))
	l.ref *= l.slowdown
	l.maxSum /= l.slowdown
	l.freqs = l.onlineMHz(fr)
	l.quota = Quota(nil, nil, l.freqs, l.ref, l.hostCPUs)
	u, err := g.Usage()
	if err != nil {
		return nil, fmt.Errorf("closed loop: %w", err)
	}
	l.prevT, l.prevUsage = time.Now(), u
	if err := g.SetQuota(l.quota); err != nil {
		return nil, fmt.Errorf("closed loop: %w", err)
	}
	return l, nil
}

func (l *Loop) onlineMHz(fr []emu.CPUFreq) []float64 {
	out := make([]float64, len(l.online))
	for i, c := range l.online {
		out[i] = fr[c].MHz
	}
	return out
}

// Ref is the reference frequency, MHz: one host CPU fully used is one
// emulated CPU at Ref (the machine's highest frequency times Slowdown).
func (l *Loop) Ref() float64 { return l.ref }

// Slowdown is how much slower than the model the whole emulated machine
// runs on this host: its CPUs at their highest need more host CPUs than
// there are (1: they fit).
func (l *Loop) Slowdown() float64 { return l.slowdown }

// Run steps the loop every Interval until stop is closed. It returns the
// first error of a step (the group's files unreadable or unwritable); the
// command then keeps the last quota.
func (l *Loop) Run(stop <-chan struct{}) error {
	t := time.NewTicker(Interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return nil
		case <-t.C:
			if err := l.Step(); err != nil {
				return err
			}
		}
	}
}

// Step measures the interval since the previous step and sets the busy
// fractions and the next quota.
func (l *Loop) Step() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	dt := now.Sub(l.prevT)
	if dt <= 0 {
		return nil
	}
	pids, err := l.g.Procs()
	if err != nil {
		return fmt.Errorf("closed loop: %w", err)
	}
	usage, err := l.g.Usage()
	if err != nil {
		return fmt.Errorf("closed loop: %w", err)
	}
	run := map[int]time.Duration{}
	var procs []Proc
	var live time.Duration
	for _, pid := range pids {
		ts := threadTimes(l.proc, pid)
		var top time.Duration
		for tid, t := range ts {
			run[tid] = t.run
			if prev, ok := l.prevRun[tid]; ok && prev <= t.run {
				t.run -= prev
			}
			ts[tid] = t
			top = max(top, t.run)
		}
		p := Proc{}
		for _, t := range ts {
			live += t.run
			p.Use += t.run.Seconds() / dt.Seconds()
			if t.runnable && t.run*busyThread >= top && t.run > 0 {
				p.Runnable++
			}
		}
		procs = append(procs, p)
	}
	rest := max(0, (usage-l.prevUsage-live).Seconds()/dt.Seconds())
	busy, onCPU := Place(procs, rest, l.freqs, l.ref)
	all := make([]float64, l.m.NumCPUs())
	for i, c := range l.online {
		all[c] = busy[i]
	}
	l.load.Set(all)
	l.freqs = l.onlineMHz(l.m.Frequencies())
	// A write refills the group's runtime (cgroup.Group.SetQuota): keep
	// a quota that changed by less than quotaStep.
	if q := Quota(busy, onCPU, l.freqs, l.ref, l.hostCPUs); math.Abs(q-l.quota) > quotaStep*l.quota {
		if err := l.g.SetQuota(q); err != nil {
			return fmt.Errorf("closed loop: %w", err)
		}
		l.quota = q
	}
	l.prevT, l.prevUsage, l.prevRun = now, usage, run
	return nil
}

// thread is what the loop reads of one thread.
type thread struct {
	run      time.Duration // CPU time so far
	runnable bool          // running or waiting to run (state R)
}

// threadTimes returns each thread of process pid (none when it has
// ended: its time is then in the group's usage).
func threadTimes(proc string, pid int) map[int]thread {
	ents, _ := os.ReadDir(filepath.Join(proc, strconv.Itoa(pid), "task"))
	out := make(map[int]thread, len(ents))
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if t, err := readThread(filepath.Join(proc, strconv.Itoa(pid), "task", e.Name())); err == nil {
			out[tid] = t
		}
	}
	return out
}

// readThread reads the thread whose /proc directory is dir: its state
// and utime + stime (fields 3, 14 and 15 of stat, proc(5); USER_HZ = 100
// ticks), and its run time in ns from schedstat where the kernel has it
// (CONFIG_SCHED_INFO), which is exact.
func readThread(dir string) (thread, error) {
	b, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return thread{}, err
	}
	stat, err := procstat.Parse(string(b))
	if err != nil {
		return thread{}, fmt.Errorf("%s/stat: %w", dir, err)
	}
	ut, err := stat.Int64(14)
	if err != nil {
		return thread{}, fmt.Errorf("%s/stat: utime: %w", dir, err)
	}
	st, err := stat.Int64(15)
	if err != nil {
		return thread{}, fmt.Errorf("%s/stat: stime: %w", dir, err)
	}
	t := thread{run: time.Duration(ut+st) * 10 * time.Millisecond, runnable: stat.State() == "R"}
	if b, err := os.ReadFile(filepath.Join(dir, "schedstat")); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			if ns, err := strconv.ParseInt(f[0], 10, 64); err == nil {
				t.run = time.Duration(ns)
			}
		}
	}
	return t, nil
}

// Info is the closed loop's state as the emulated tree serves it
// (emu.LoopPath): "closed", the group, the observer group (when there is
// one), the interval, the reference frequency, the host's CPUs and the
// quota now. internal/emu/emuloop parses it.
func (l *Loop) Info() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	obs := ""
	if l.observer != nil {
		obs = " " + emuloop.KeyObserver + "=" + l.observer.String()
	}
	return fmt.Sprintf("closed %s=%s%s interval_ms=%d ref_mhz=%.6g slowdown=%.3f host_cpus=%d quota_cpus=%.3f",
		emuloop.KeyGroup, l.g, obs, Interval.Milliseconds(), l.ref, l.slowdown, l.hostCPUs, l.quota)
}

// Banner is the line hwpemu run prints about the loop: the group, the
// rate, the reference frequency and the host's cap.
func (l *Loop) Banner() string {
	v := "v1"
	if l.g.V2 {
		v = "v2"
	}
	s := fmt.Sprintf("closed loop: CMD's CPU time follows the emulated CPUs' delivered frequencies (cgroup %s %s, quota set every %d ms); one host CPU = one emulated CPU at %.6g MHz; ",
		v, l.g.Dirs[0], Interval.Milliseconds(), l.ref)
	if l.slowdown <= 1 {
		return s + fmt.Sprintf("host cap %d CPUs, above the %.2f the %d emulated CPUs need at their highest", l.hostCPUs, l.maxSum, len(l.online))
	}
	return s + fmt.Sprintf("host cap %d CPUs: the %d emulated CPUs at their highest need %.2f, so everything runs %.2fx slower than the model, the same for every setting",
		l.hostCPUs, len(l.online), l.maxSum*l.slowdown, l.slowdown)
}

// OpenInfo is the emulated tree's loop file for a command run open loop
// for reason.
func OpenInfo(reason string) string { return "open reason=" + reason }

// OpenBanner is hwpemu run's line for a command run open loop for reason.
func OpenBanner(reason string) string {
	return "open loop (" + reason + "): CMD runs at the host's speed, whatever the emulated CPUs deliver"
}
