// SPDX-License-Identifier: Apache-2.0

package profile

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
)

// ErrWrite is wrapped when the kernel refuses a write.
var ErrWrite = errors.New("the kernel refused a write")

// WriteError is a refused sysfs write: the file, the value and the
// kernel's reason.
type WriteError struct {
	Write Write
	Err   error
}

func (e *WriteError) Error() string {
	return fmt.Sprintf("%v: write %q to /%s: %v%s", ErrWrite, e.Write.Value, e.Write.Path, e.Err, reason(e.Write, e.Err))
}

// Unwrap returns ErrWrite and the errno.
func (e *WriteError) Unwrap() []error { return []error{ErrWrite, e.Err} }

// reason explains an errno for a key as the drivers' store functions do.
func reason(w Write, err error) string {
	switch {
	case errors.Is(err, syscall.EBUSY) && w.Key == EPP:
		return " (the driver refuses any EPP but 0 under the performance governor)"
	case errors.Is(err, syscall.EPERM) && w.Key == NoTurbo:
		return " (the BIOS disabled turbo: store_no_turbo() refuses to enable it)"
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return " (writing sysfs needs root)"
	case errors.Is(err, syscall.EINVAL):
		return " (the driver does not accept this value)"
	}
	return ""
}

// Options configure a Switcher.
type Options struct {
	FS         sysfs.FS
	JournalDir string // "": JournalDir()
	// OnWrite, when set, is called after each successful write (for a
	// log of what changed).
	OnWrite func(Write)
}

// Switcher applies profiles one after another under one journal: the
// settings before the first change, restored by Restore (or, after a
// crash, by package-level Restore). It holds the journal lock from Begin
// to Restore or Release, so no other hwpprobe changes settings meanwhile.
type Switcher struct {
	opt     Options
	lock    *Lock
	journal *Journal
	// Applied is the profile applied last.
	Applied *Profile
}

// Begin takes the journal lock, refuses when a journal is left from an
// earlier run (ErrJournalExists, with its owner), reads every setting a
// profile may change on every online CPU and stores them in a new
// journal. name is the first profile, recorded as the journal's owner.
func Begin(opt Options, name string) (*Switcher, error) {
	if opt.JournalDir == "" {
		opt.JournalDir = JournalDir()
	}
	// Without waiting for the lock: a running apply holds it while its
	// command runs, and its journal already says whose it is.
	if old, err := PeekJournal(opt.JournalDir); err == nil && old != nil {
		return nil, fmt.Errorf("%w: %s; run `hwpprobe restore`", ErrJournalExists, old.Owner())
	}
	lock, err := LockDir(opt.JournalDir)
	if err != nil {
		return nil, err
	}
	s, err := begin(opt, lock, name)
	if err != nil {
		lock.Unlock()
		return nil, err
	}
	return s, nil
}

func begin(opt Options, lock *Lock, name string) (*Switcher, error) {
	old, err := lock.Read()
	if err != nil {
		return nil, err
	}
	if old != nil {
		return nil, fmt.Errorf("%w: %s; run `hwpprobe restore`", ErrJournalExists, old.Owner())
	}
	m, err := ReadMachine(opt.FS)
	if err != nil {
		return nil, fmt.Errorf("read settings: %w", err)
	}
	j := &Journal{Version: 1, PID: os.Getpid(), User: invokingUser(), Profile: name,
		Started: time.Now().UTC().Truncate(time.Second), Root: opt.FS.Root(), Emulated: opt.FS.Emulated(),
		Original: m.State}
	if err := lock.Write(j); err != nil {
		return nil, err
	}
	return &Switcher{opt: opt, lock: lock, journal: j}, nil
}

// Original returns the settings before the first change.
func (s *Switcher) Original() State { return s.journal.Original.Clone() }

// Machine reads the machine as it is now.
func (s *Switcher) Machine() (*Machine, error) { return ReadMachine(s.opt.FS) }

// Apply plans p against the machine as it is now and writes it. A
// profile the machine cannot take is refused before any write (the
// error wraps ErrRefused or ErrNoCPUFreq); a write the kernel refuses
// stops the profile with a WriteError, leaving the settings written so
// far in place for Restore. TuneD and ppd profiles are switched through
// their daemons.
func (s *Switcher) Apply(p *Profile) (*Plan, error) {
	if s.lock == nil {
		return nil, errors.New("profile: Apply after Restore or Release")
	}
	m, err := ReadMachine(s.opt.FS)
	if err != nil {
		return nil, fmt.Errorf("read settings: %w", err)
	}
	plan, err := m.Plan(p)
	if err != nil {
		return nil, err
	}
	if s.journal.Profile != p.Text {
		s.journal.Profile = p.Text
		if err := s.lock.Write(s.journal); err != nil {
			return nil, err
		}
	}
	if p.Kind == Tuned || p.Kind == PPD {
		return plan, s.switchDaemon(p)
	}
	for _, w := range plan.Writes {
		if err := s.apply(m, w); err != nil {
			return plan, err
		}
	}
	s.Applied = p
	return plan, nil
}

// apply makes one write; a governor write that moves a CPU out of the
// performance policy it had at the start first records the EPP
// intel_pstate then restores (its saved epp_powersave), so that Restore
// can make the kernel save it again.
func (s *Switcher) apply(m *Machine, w Write) error {
	learn := false
	if w.Key == Governor && w.Value != "performance" {
		orig := s.journal.Original.CPU(w.CPU)
		cur := m.State.CPU(w.CPU)
		learn = orig != nil && cur != nil && orig.Values[Governor] == "performance" &&
			cur.Values[Governor] == "performance" && orig.SavedEPP == "" && orig.Values[EPP] != ""
	}
	if err := writeFile(s.opt.FS, w); err != nil {
		return err
	}
	if s.opt.OnWrite != nil {
		s.opt.OnWrite(w)
	}
	if !learn {
		return nil
	}
	v, err := s.opt.FS.ReadString(Path(EPP, w.CPU))
	if err != nil {
		return fmt.Errorf("read the EPP intel_pstate restored on cpu%d: %w", w.CPU, err)
	}
	s.journal.Original.CPU(w.CPU).SavedEPP = eppWritable(v)
	return s.lock.Write(s.journal)
}

// eppWritable is the text that writes back an EPP as shown: intel_pstate
// shows a register EPP of 0 that is not in its table as "default", which
// written back would mean the boot-time EPP instead.
func eppWritable(shown string) string {
	if shown == "default" {
		return "0"
	}
	return shown
}

// writeFile writes one value to a sysfs file (no O_CREAT, no O_TRUNC:
// sysfs attributes take one write).
func writeFile(fs sysfs.FS, w Write) error {
	f, err := os.OpenFile(fs.Path(w.Path), os.O_WRONLY, 0)
	if err != nil {
		return &WriteError{Write: w, Err: unwrapPath(err)}
	}
	_, err = f.WriteString(w.Value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return &WriteError{Write: w, Err: unwrapPath(err)}
	}
	return nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Release unlocks the journal and leaves it in place: the settings stay
// until `hwpprobe restore`.
func (s *Switcher) Release() error {
	err := s.lock.Unlock()
	s.lock = nil
	return err
}

// RestoreOnReturn is deferred by a run that changes settings
// (defer sw.RestoreOnReturn(&err)): when the run returns it restores
// them and joins a failed restore, or the settings that did not come
// back, into *err; on a panic it restores them and lets the panic go on.
func (s *Switcher) RestoreOnReturn(err *error) {
	if r := recover(); r != nil {
		s.Restore()
		panic(r)
	}
	res, rerr := s.Restore()
	switch {
	case rerr != nil:
		*err = errors.Join(*err, rerr)
	case len(res.Failed) > 0:
		*err = errors.Join(*err, errors.Join(res.Failed...))
	}
}

// RestoreOnPanic is deferred by a run that restores the settings itself
// on its way out: on a panic it restores them and lets the panic go on.
func (s *Switcher) RestoreOnPanic() {
	if r := recover(); r != nil {
		s.Restore()
		panic(r)
	}
}

// Restore brings back every setting of the journal, reads them back, and
// removes the journal when all returned. It is safe to call more than once.
func (s *Switcher) Restore() (*RestoreResult, error) {
	if s.lock == nil {
		return &RestoreResult{}, nil
	}
	defer s.Release()
	return restoreLocked(s.opt, s.lock, s.journal)
}

// Revert writes the journal's settings back and reads them back, keeping
// the journal and the lock: the next Apply starts from the original
// settings (matrix applies each profile from there).
func (s *Switcher) Revert() (*RestoreResult, error) {
	if s.lock == nil {
		return nil, errors.New("profile: Revert after Restore or Release")
	}
	s.Applied = nil
	return revert(s.opt, s.journal)
}

// journalDir is the journal directory the options name.
func (o Options) journalDir() string {
	if o.JournalDir == "" {
		return JournalDir()
	}
	return o.JournalDir
}
