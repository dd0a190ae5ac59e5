// SPDX-License-Identifier: Apache-2.0

package profile

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// DefaultJournalDir is where the journal lives: /run is a tmpfs that a
// reboot empties, when the kernel's settings are back to their boot values
// anyway.
const DefaultJournalDir = "/run/hwpprobe"

// JournalDirEnv overrides DefaultJournalDir. It exists for the tests only
// (they run as root on a real machine and must not touch /run/hwpprobe);
// docs/apply.md says so.
const JournalDirEnv = "HWPPROBE_JOURNAL_DIR"

// Journal file names inside the journal directory.
const (
	journalFile = "journal.json"
	lockFile    = "lock"
)

// ErrJournalExists is wrapped when a journal from an earlier run is left:
// its settings have not been restored yet.
var ErrJournalExists = errors.New("a journal of settings to restore exists")

// ErrLocked is wrapped when another hwpprobe holds the journal lock too
// long.
var ErrLocked = errors.New("the journal is locked by another hwpprobe")

// lockWait bounds how long a lock is waited for: long enough for another
// restore to finish, short enough not to look hung.
var lockWait = 20 * time.Second

// JournalDir returns the journal directory: $HWPPROBE_JOURNAL_DIR when
// set (tests only), else DefaultJournalDir.
func JournalDir() string {
	if d := os.Getenv(JournalDirEnv); d != "" {
		return d
	}
	return DefaultJournalDir
}

// Journal records the settings before the first change, so that they can
// be restored after any exit, a crash included.
type Journal struct {
	Version int       `json:"version"`
	PID     int       `json:"pid"`
	User    string    `json:"user"`
	Profile string    `json:"profile"` // the latest profile applied
	Started time.Time `json:"started"`
	Root    string    `json:"root"` // the system root the settings belong to
	// Emulated names the emulated machine the settings belong to; restore
	// refuses to apply them to another machine.
	Emulated string `json:"emulated,omitempty"`
	Original State  `json:"original"`
}

// Owner is the one-line description of whose journal it is.
func (j *Journal) Owner() string {
	return fmt.Sprintf("pid %d (user %s) applied %q at %s", j.PID, j.User, j.Profile, j.Started.Format(time.RFC3339))
}

// invokingUser names the user: the sudo user when run under sudo.
func invokingUser() string {
	name := os.Getenv("SUDO_USER")
	if name == "" {
		if u, err := user.Current(); err == nil {
			name = u.Username
		} else {
			name = strconv.Itoa(os.Getuid())
		}
	}
	return name
}

// Lock is the journal directory's exclusive lock (flock on its lock
// file); the kernel releases it when the process dies, SIGKILL included.
type Lock struct {
	dir string
	f   *os.File
}

// LockDir creates dir if needed (mode 0700) and takes its lock, waiting
// at most lockWait.
func LockDir(dir string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("journal directory: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR|os.O_CREATE|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal lock: %w", err)
	}
	deadline := time.Now().Add(lockWait)
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return &Lock{dir: dir, f: f}, nil
		}
		if err != unix.EWOULDBLOCK && err != unix.EINTR {
			f.Close()
			return nil, fmt.Errorf("journal lock %s: %w", f.Name(), err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("%w (%s held for more than %v)", ErrLocked, f.Name(), lockWait)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Unlock releases the lock.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the last descriptor releases the flock
	l.f = nil
	return err
}

// Read returns the journal, nil when there is none.
func (l *Lock) Read() (*Journal, error) { return readJournal(l.dir) }

// PeekJournal reads the journal in dir without the lock (to say whose it
// is while another hwpprobe holds the lock); nil when there is none.
func PeekJournal(dir string) (*Journal, error) { return readJournal(dir) }

func readJournal(dir string) (*Journal, error) {
	path := filepath.Join(dir, journalFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	var j Journal
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	if j.Version != 1 {
		return nil, fmt.Errorf("journal %s: version %d, this hwpprobe reads 1", path, j.Version)
	}
	return &j, nil
}

// Write stores j atomically: a temporary file in the same directory,
// fsync, rename over the journal, fsync of the directory.
func (l *Lock) Write(j *Journal) error {
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	tmp, err := os.CreateTemp(l.dir, journalFile+".tmp*")
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("journal: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("journal: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(l.dir, journalFile)); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	return syncDir(l.dir)
}

// Remove deletes the journal (its settings are back).
func (l *Lock) Remove() error {
	err := os.Remove(filepath.Join(l.dir, journalFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("journal: %w", err)
	}
	return syncDir(l.dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("journal: sync %s: %w", dir, err)
	}
	return nil
}
