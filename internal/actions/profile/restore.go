// SPDX-License-Identifier: Apache-2.0

package profile

import (
	"errors"
	"fmt"
	"slices"

	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
)

// ErrNotRestored is wrapped when settings did not come back; the journal
// is kept so that restore can be run again.
var ErrNotRestored = errors.New("settings did not return")

// ErrOtherMachine is wrapped when a journal belongs to another system root
// or emulated machine than the one restore runs on.
var ErrOtherMachine = errors.New("the journal belongs to another machine")

// RestoreResult says what a restore did.
type RestoreResult struct {
	Journal *Journal // nil: there was nothing to restore
	Writes  []Write  // the writes made
	// Failed lists the writes the kernel refused.
	Failed []error
	// NotReturned lists the settings that differ from the journal after
	// the restore, one line each.
	NotReturned []string
}

// Restore restores the settings of the journal in opt.JournalDir, if
// there is one, and reads them back (`hwpprobe restore`). The journal is
// removed when every setting returned; otherwise the error wraps
// ErrNotRestored and lists them.
func Restore(opt Options) (*RestoreResult, error) {
	if opt.JournalDir == "" {
		opt.JournalDir = JournalDir()
	}
	lock, err := LockDir(opt.JournalDir)
	if errors.Is(err, ErrLocked) {
		if j, _ := PeekJournal(opt.JournalDir); j != nil {
			return nil, fmt.Errorf("%w: %s and is still running: it restores the settings when its command ends", err, j.Owner())
		}
	}
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	j, err := lock.Read()
	if err != nil {
		return nil, err // a journal that cannot be read is not "no journal"
	}
	if j == nil {
		return &RestoreResult{}, nil
	}
	if j.Root != opt.FS.Root() || j.Emulated != opt.FS.Emulated() {
		return nil, fmt.Errorf("%w: it was written for root %s (emulated %q), this is root %s (emulated %q)",
			ErrOtherMachine, j.Root, j.Emulated, opt.FS.Root(), opt.FS.Emulated())
	}
	return restoreLocked(opt, lock, j)
}

// restoreLocked restores j's settings under the held lock and removes
// the journal when they all returned.
func restoreLocked(opt Options, lock *Lock, j *Journal) (*RestoreResult, error) {
	res, err := revert(opt, j)
	if err != nil {
		return res, err
	}
	return res, lock.Remove()
}

// revert writes j's settings back and reads them back.
func revert(opt Options, j *Journal) (*RestoreResult, error) {
	res := &RestoreResult{Journal: j}
	r := restorer{opt: opt, orig: j.Original, res: res}
	r.globals()
	r.limits()
	r.governorsAndEPP()
	r.cpuKey(EPB)
	r.daemons()
	var list cpus.List
	for _, c := range j.Original.CPUs {
		list = append(list, c.CPU)
	}
	now, err := ReadState(opt.FS, list)
	if err != nil {
		res.Failed = append(res.Failed, err)
	}
	now.Daemons = readDaemons(j.Original.Daemons)
	res.NotReturned = Diff(j.Original, now)
	if len(res.NotReturned) > 0 {
		return res, fmt.Errorf("%w (%d; the journal stays for another `hwpprobe restore`): %s",
			ErrNotRestored, len(res.NotReturned), res.NotReturned[0])
	}
	return res, nil
}

// restorer writes the journal's settings back in the order the kernel
// needs, writing only those that differ now.
type restorer struct {
	opt  Options
	orig State
	res  *RestoreResult
}

func (r *restorer) write(w Write) {
	if err := writeFile(r.opt.FS, w); err != nil {
		r.res.Failed = append(r.res.Failed, err)
		return
	}
	r.res.Writes = append(r.res.Writes, w)
	if r.opt.OnWrite != nil {
		r.opt.OnWrite(w)
	}
}

// now reads the current text of a setting ("" when unreadable).
func (r *restorer) now(k Key, cpu int) string {
	v, _ := r.opt.FS.ReadString(Path(k, cpu))
	return v
}

// globals: no_turbo first (it changes cpuinfo_max_freq and squashes
// min_perf_pct), boost, then the percentages, max first when the old
// minimum is above the present maximum (store_min_perf_pct() clamps).
func (r *restorer) globals() {
	order := slices.Clone(globalKeys)
	if lo, ok := intValue(r.orig.Globals[MinPerfPct]); ok {
		if hi, ok := intValue(r.now(MaxPerfPct, 0)); ok && lo > hi {
			order = []Key{NoTurbo, Boost, MaxPerfPct, MinPerfPct}
		}
	}
	for _, k := range order {
		if v, ok := r.orig.Globals[k]; ok && r.now(k, 0) != v {
			r.write(Write{Key: k, CPU: -1, Path: Path(k, 0), Value: v})
		}
	}
}

// limits restores scaling_min/max_freq, max first when the old minimum
// is above the present maximum.
func (r *restorer) limits() {
	for _, c := range r.orig.CPUs {
		order := []Key{ScalingMinFreq, ScalingMaxFreq}
		if lo, ok := intValue(c.Values[ScalingMinFreq]); ok {
			if hi, ok := intValue(r.now(ScalingMaxFreq, c.CPU)); ok && lo > hi {
				order = []Key{ScalingMaxFreq, ScalingMinFreq}
			}
		}
		for _, k := range order {
			if v, ok := c.Values[k]; ok && r.now(k, c.CPU) != v {
				r.write(Write{Key: k, CPU: c.CPU, Path: Path(k, c.CPU), Value: v})
			}
		}
	}
}

// governorsAndEPP restores each CPU's governor, then its EPP (refused
// under performance). A CPU that was in performance and that Apply moved
// out of it goes through powersave with the EPP intel_pstate had saved,
// so that entering performance saves that EPP again (intel_pstate_hwp_set()).
func (r *restorer) governorsAndEPP() {
	for _, c := range r.orig.CPUs {
		gov, ok := c.Values[Governor]
		if !ok {
			continue
		}
		w := func(k Key, v string) { r.write(Write{Key: k, CPU: c.CPU, Path: Path(k, c.CPU), Value: v}) }
		if gov == "performance" && c.SavedEPP != "" {
			if r.now(Governor, c.CPU) == "performance" {
				w(Governor, "powersave")
			}
			if eppWritable(r.now(EPP, c.CPU)) != c.SavedEPP {
				w(EPP, c.SavedEPP)
			}
			w(Governor, gov)
			continue
		}
		if r.now(Governor, c.CPU) != gov {
			w(Governor, gov)
		}
		if epp, ok := c.Values[EPP]; ok && gov != "performance" && r.now(EPP, c.CPU) != epp {
			w(EPP, eppWritable(epp))
		}
	}
}

// cpuKey restores one per-CPU key where it differs.
func (r *restorer) cpuKey(k Key) {
	for _, c := range r.orig.CPUs {
		if v, ok := c.Values[k]; ok && r.now(k, c.CPU) != v {
			r.write(Write{Key: k, CPU: c.CPU, Path: Path(k, c.CPU), Value: v})
		}
	}
}

// daemons switches TuneD and power-profiles-daemon back.
func (r *restorer) daemons() {
	for name, prof := range r.orig.Daemons {
		if err := switchDaemon(name, prof); err != nil {
			r.res.Failed = append(r.res.Failed, err)
		}
	}
}
