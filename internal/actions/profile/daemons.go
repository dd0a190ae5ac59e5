// SPDX-License-Identifier: Apache-2.0

package profile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/kernel/procstat"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
)

// ErrDaemon is wrapped when a daemon that also writes these settings is
// running, or when a tuned:/ppd: profile's daemon is missing.
var ErrDaemon = errors.New("power daemon")

// Daemon is a program that writes cpufreq settings itself.
type Daemon struct {
	Name  string   // as users know it
	Names []string // process names (comm, truncated to 15 bytes, or a script's name)
	What  string   // what it writes
}

// Daemons are the daemons that fight over the settings a profile writes.
var Daemons = []Daemon{
	{"tuned", []string{"tuned"}, "governor, EPP, EPB, min_perf_pct, no_turbo (TuneD plugin_cpu.py)"},
	{"power-profiles-daemon", []string{"power-profiles-daemon", "power-profiles-"}, "governor, EPP, EPB, boost (ppd-driver-intel-pstate.c, ppd-driver-amd-pstate.c)"},
	{"thermald", []string{"thermald"}, "intel_pstate max_perf_pct and power limits when hot"},
	{"tlp", []string{"tlp"}, "governor, EPP, EPB, no_turbo, min/max_perf_pct"},
	{"auto-cpufreq", []string{"auto-cpufreq"}, "governor, EPP, turbo"},
	{"system76-power", []string{"system76-power"}, "governor, EPP, max_perf_pct"},
}

// Running is a daemon found running.
type Running struct {
	Daemon
	PID int
}

// DetectDaemons lists the Daemons running, from /proc/PID/comm and the
// program names in /proc/PID/cmdline (a Python daemon's comm is its
// script's name, or "python3").
func DetectDaemons(fs sysfs.FS) []Running {
	ents, err := os.ReadDir(fs.Path("proc"))
	if err != nil {
		return nil
	}
	var out []Running
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if zombie(fs, e.Name()) {
			continue
		}
		names := processNames(fs, e.Name())
		for _, d := range Daemons {
			if slices.ContainsFunc(d.Names, func(n string) bool { return slices.Contains(names, n) }) &&
				!slices.ContainsFunc(out, func(r Running) bool { return r.Name == d.Name }) {
				out = append(out, Running{Daemon: d, PID: pid})
			}
		}
	}
	return out
}

// zombie reports whether a process has exited and waits to be reaped
// (state Z or X in /proc/PID/stat): its comm stays, but it writes nothing.
func zombie(fs sysfs.FS, pid string) bool {
	stat, err := fs.ReadString("proc", pid, "stat")
	if err != nil {
		return true // gone
	}
	st, err := procstat.Parse(stat)
	if err != nil {
		return false
	}
	return st.State() == "Z" || st.State() == "X"
}

// processNames returns a process's comm and the base names of its first
// two arguments (an interpreter and its script).
func processNames(fs sysfs.FS, pid string) []string {
	var names []string
	if comm, err := fs.ReadString("proc", pid, "comm"); err == nil {
		names = append(names, comm)
	}
	if b, err := os.ReadFile(fs.Path("proc", pid, "cmdline")); err == nil {
		args := bytes.Split(b, []byte{0})
		for i := 0; i < len(args) && i < 2; i++ {
			if len(args[i]) > 0 {
				names = append(names, filepath.Base(string(args[i])))
			}
		}
	}
	return names
}

// CheckDaemons refuses when a daemon that writes these settings runs,
// except the one p itself switches (tuned: or ppd:); the error names flag,
// the command's option that runs beside it anyway.
func CheckDaemons(running []Running, p *Profile, flag string) error {
	for _, r := range running {
		if (p.Kind == Tuned && r.Name == "tuned") || (p.Kind == PPD && r.Name == "power-profiles-daemon") || p.Kind == Current {
			continue
		}
		return fmt.Errorf("%w: %s (pid %d) is running and also writes %s; stop it, use tuned:/ppd: profiles, or pass %s",
			ErrDaemon, r.Name, r.PID, r.What, flag)
	}
	return nil
}

// daemonTool is the command line tool of each switchable daemon.
var daemonTool = map[string]struct{ tool, daemon string }{
	"tuned": {"tuned-adm", "tuned"},
	"ppd":   {"powerprofilesctl", "power-profiles-daemon"},
}

// toolTimeout bounds a tuned-adm or powerprofilesctl call (D-Bus calls
// that a stuck daemon would never answer).
const toolTimeout = 30 * time.Second

// runTool runs a daemon's tool and returns its trimmed output.
func runTool(name string, args ...string) (string, error) {
	t := daemonTool[name]
	path, err := exec.LookPath(t.tool)
	if err != nil {
		return "", fmt.Errorf("%w: %s:%s needs %s, which is not installed (%s)", ErrDaemon, name, strings.Join(args, " "), t.tool, t.daemon)
	}
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%w: %s %s: %v: %s", ErrDaemon, t.tool, strings.Join(args, " "), err, oneLine(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// activeProfile asks a daemon for its active profile.
func activeProfile(name string) (string, error) {
	if name == "ppd" {
		return runTool(name, "get")
	}
	out, err := runTool(name, "active")
	if err != nil {
		return "", err
	}
	// "Current active profile: throughput-performance"
	_, prof, ok := strings.Cut(out, ": ")
	if !ok {
		return "", fmt.Errorf("%w: tuned-adm active: unexpected output %q", ErrDaemon, oneLine(out))
	}
	return strings.TrimSpace(prof), nil
}

// switchDaemon makes prof the daemon's active profile.
func switchDaemon(name, prof string) error {
	var err error
	if name == "ppd" {
		_, err = runTool(name, "set", prof)
	} else {
		_, err = runTool(name, "profile", prof)
	}
	return err
}

// readDaemons reads the active profile of each daemon in want.
func readDaemons(want map[string]string) map[string]string {
	if len(want) == 0 {
		return nil
	}
	got := map[string]string{}
	for name := range want {
		if p, err := activeProfile(name); err == nil {
			got[name] = p
		}
	}
	return got
}

// daemonRunning checks that the daemon a tuned:/ppd: profile needs runs.
func daemonRunning(fs sysfs.FS, name string) error {
	t := daemonTool[name]
	if _, err := exec.LookPath(t.tool); err != nil {
		return fmt.Errorf("%w: %s profiles need %s, which is not installed (%s)", ErrDaemon, name, t.tool, t.daemon)
	}
	for _, r := range DetectDaemons(fs) {
		if r.Name == t.daemon {
			return nil
		}
	}
	return fmt.Errorf("%w: %s profiles need %s running; it is not (no such process)", ErrDaemon, name, t.daemon)
}

// CheckProfileDaemon checks, before anything is written, that a tuned: or
// ppd: profile's tool is installed and its daemon runs.
func CheckProfileDaemon(fs sysfs.FS, p *Profile) error {
	switch p.Kind {
	case Tuned:
		return daemonRunning(fs, "tuned")
	case PPD:
		return daemonRunning(fs, "ppd")
	}
	return nil
}

// switchDaemon records the daemon's active profile in the journal (once)
// and switches to p.
func (s *Switcher) switchDaemon(p *Profile) error {
	name := "tuned"
	if p.Kind == PPD {
		name = "ppd"
	}
	if err := daemonRunning(s.opt.FS, name); err != nil {
		return err
	}
	if _, ok := s.journal.Original.Daemons[name]; !ok {
		cur, err := activeProfile(name)
		if err != nil {
			return err
		}
		if s.journal.Original.Daemons == nil {
			s.journal.Original.Daemons = map[string]string{}
		}
		s.journal.Original.Daemons[name] = cur
		if err := s.lock.Write(s.journal); err != nil {
			return err
		}
	}
	if err := switchDaemon(name, p.Name); err != nil {
		return err
	}
	s.Applied = p
	return nil
}
