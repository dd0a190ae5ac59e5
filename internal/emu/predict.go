// SPDX-License-Identifier: Apache-2.0

package emu

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/emu/vfs"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
)

// SysfsWrite is one write to a machine's tree: Path relative to the root
// (links such as cpuN/cpufreq are followed), Value as a program writes it.
type SysfsWrite struct {
	Path, Value string
}

// PredictProfile is one side of a prediction: its name and the writes that
// set it up on a machine fresh from its description, applied in order
// under the kernel's rules as a program's writes are.
type PredictProfile struct {
	Name   string
	Writes []SysfsWrite
}

// PredictOptions say what Predict runs.
type PredictOptions struct {
	Variant string // the model variant (WithVariant; "" the default)
	// Busy is the number of busy CPUs: the first Busy online CPUs are
	// busy all the time, the others idle; 0 means every online CPU.
	Busy int
}

// TypeMHz is the mean delivered frequency of the busy CPUs of one core
// type.
type TypeMHz struct {
	Type string  // the description's core type name
	CPUs int     // how many of its CPUs are busy
	MHz  float64 // their mean delivered frequency (APERF rate over busy time)
}

// Prediction is the model's steady state under one profile.
type Prediction struct {
	Profile  string
	Types    []TypeMHz     // core types with busy CPUs, in the description's order
	PkgWatts float64       // mean package power, all packages
	PL1Watts float64       // package 0's PL1 in force at the end (0: none enforced)
	TempC    float64       // package 0's temperature at the end (0: no thermal model)
	WorkMHz  float64       // the work rate: sum over the busy CPUs of delivered MHz
	Settle   time.Duration // model time run before the measurement
	Window   time.Duration // model time measured over
}

// Settling of a prediction (model time): the steady state is taken after
// predictSettleTaus of the longest time constant (at least
// predictMinSettle), averaged over predictWindow; a machine whose time
// constants would need more than predictMaxSettle is refused.
const (
	predictSettleTaus = 20
	predictMinSettle  = 600 * time.Second
	predictMaxSettle  = 24 * time.Hour
	predictWindow     = 60 * time.Second
)

// ErrPredict is wrapped by Predict's errors about its arguments: a busy
// count out of range, a write the machine refuses.
var ErrPredict = errors.New("predict")

// Predict runs, for each profile, machine (a built-in name or a
// description file, as Load takes) from its description with the model
// variant, applies the profile's writes, keeps o.Busy CPUs busy (the rest
// idle) on a clock of its own until every power limit's and the thermal
// model's average has settled, and returns the steady state: what the
// model alone says a CPU-bound workload gets under each profile.
func Predict(machine string, o PredictOptions, profiles []PredictProfile) ([]Prediction, error) {
	var out []Prediction
	for _, p := range profiles {
		pr, err := predictOne(machine, o, p)
		if err != nil {
			return nil, err
		}
		out = append(out, pr)
	}
	return out, nil
}

// predictOne runs one profile on a fresh machine.
func predictOne(machine string, o PredictOptions, p PredictProfile) (Prediction, error) {
	clk := time.Unix(0, 0)
	now := func() time.Time { return clk }
	load := ConstLoad{}
	m, err := Load(machine, WithClock(now), WithLoad(&load), WithVariant(o.Variant))
	if err != nil {
		return Prediction{}, err
	}
	busy, err := m.busyCPUs(o.Busy)
	if err != nil {
		return Prediction{}, err
	}
	load = make(ConstLoad, m.NumCPUs())
	for _, n := range busy {
		load[n] = 1
	}
	root := m.Tree()
	for _, w := range p.Writes {
		if err := writeTree(root, w); err != nil {
			return Prediction{}, fmt.Errorf("%w: profile %s: %w", ErrPredict, p.Name, err)
		}
	}
	settle, err := m.settleTime()
	if err != nil {
		return Prediction{}, err
	}
	clk = clk.Add(settle)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.advance()
	type mark struct{ aperf, busySec float64 }
	before := make([]mark, len(m.cpus))
	for _, c := range m.cpus {
		before[c.n] = mark{c.aperf, c.busySec}
	}
	j0 := m.allPkgJoules()
	clk = clk.Add(predictWindow)
	m.advance()
	pr := Prediction{Profile: p.Name, PkgWatts: (m.allPkgJoules() - j0) / predictWindow.Seconds(), Settle: settle, Window: predictWindow}
	sum := map[string]float64{}
	count := map[string]int{}
	for _, n := range busy {
		c := m.cpus[n]
		mhz := (c.aperf - before[n].aperf) / (c.busySec - before[n].busySec) / 1e6
		sum[c.ctName] += mhz
		count[c.ctName]++
		pr.WorkMHz += mhz
	}
	for _, g := range m.desc.Cores {
		if count[g.Type] > 0 && !slices.ContainsFunc(pr.Types, func(t TypeMHz) bool { return t.Type == g.Type }) {
			pr.Types = append(pr.Types, TypeMHz{Type: g.Type, CPUs: count[g.Type], MHz: sum[g.Type] / float64(count[g.Type])})
		}
	}
	if lim := m.limits(&m.pkgs[0].limits); lim[limPL1].enabled {
		pr.PL1Watts = lim[limPL1].watts
	}
	pr.TempC = m.pkgTempC(0)
	return pr, nil
}

// busyCPUs returns the first n online CPUs (every online CPU for n = 0).
func (m *Machine) busyCPUs(n int) (cpus.List, error) {
	online := m.Online()
	switch {
	case n == 0:
		return online, nil
	case n < 0 || n > len(online):
		return nil, fmt.Errorf("%w: %d busy CPUs: %s has %d online (1 to %d, or 0 for all)", ErrPredict, n, m.desc.Name, len(online), len(online))
	}
	return online[:n], nil
}

// Online returns the online CPUs.
func (m *Machine) Online() cpus.List { return cpus.List(m.onlineCPUs()) }

// settleTime is how long a prediction runs before it measures: the
// longest time constant of the limits and the thermal model times
// predictSettleTaus, at least predictMinSettle.
func (m *Machine) settleTime() (time.Duration, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	longest := 0.0
	for _, ps := range m.pkgs {
		for _, p := range m.limits(&ps.limits) {
			longest = max(longest, p.tau)
		}
	}
	settle := max(time.Duration(predictSettleTaus*longest*float64(time.Second)), predictMinSettle)
	if longest*predictSettleTaus > predictMaxSettle.Seconds() {
		return 0, fmt.Errorf("%w: %s: a time constant of %s is too long to reach a steady state (at most %s)",
			ErrPredict, m.desc.Name, seconds(longest), seconds(predictMaxSettle.Seconds()/predictSettleTaus))
	}
	return settle, nil
}

// allPkgJoules is the package energy of every package so far.
func (m *Machine) allPkgJoules() float64 {
	j := 0.0
	for _, ps := range m.pkgs {
		j += ps.joules["pkg"]
	}
	return j
}

// writeTree writes w to the tree at root as a program's write(2) to that
// path does: relative links are followed, a missing file is
// fs.ErrNotExist, a read-only one fs.ErrPermission, and the file's store
// applies the kernel's rules (its error is returned).
func writeTree(root *vfs.Dir, w SysfsWrite) error {
	n, err := resolve(root, w.Path)
	if err != nil {
		return &fs.PathError{Op: "write", Path: w.Path, Err: err}
	}
	f, ok := n.(*vfs.File)
	if !ok || !f.Writable() {
		return &fs.PathError{Op: "write", Path: w.Path, Err: fs.ErrPermission}
	}
	if err := f.Store(vfs.Caller{}, []byte(w.Value)); err != nil {
		return &fs.PathError{Op: "write", Path: w.Path, Err: err}
	}
	return nil
}

// maxSymlinks is the kernel's limit on links followed in one lookup
// (MAXSYMLINKS).
const maxSymlinks = 40

// resolve walks the slash-separated path p from root, following relative
// links (a link's target is relative to the directory holding it).
func resolve(root *vfs.Dir, p string) (vfs.Node, error) {
	elems := strings.Split(path.Clean("/"+p), "/")
	var n vfs.Node = root
	dir, links := "", 0
	for len(elems) > 0 {
		el := elems[0]
		elems = elems[1:]
		if el == "" || el == "." {
			continue
		}
		d, ok := n.(*vfs.Dir)
		if !ok {
			return nil, syscall.ENOTDIR
		}
		if n, ok = d.Lookup(el); !ok {
			return nil, fs.ErrNotExist
		}
		l, isLink := n.(*vfs.Symlink)
		if !isLink {
			dir = path.Join(dir, el)
			continue
		}
		if links++; links > maxSymlinks {
			return nil, syscall.ELOOP
		}
		elems = append(strings.Split(path.Join("/", dir, l.Target), "/"), elems...)
		n, dir = root, ""
	}
	return n, nil
}
