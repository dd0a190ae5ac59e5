// SPDX-License-Identifier: Apache-2.0

// Package emuloop reads what hwpemu says about its loop (the file
// sysfs.EmulatedLoop: whether the command runs in the closed loop, and in
// which control groups) and lets an observer step out of the closed loop.
//
// Under `hwpemu run`'s closed loop every process of the command runs in a
// group whose CPU bandwidth follows the emulated CPUs' delivered
// frequencies. A program that measures a workload there (hwpprobe diff,
// explain, record) would be held back with it: its sampling and start-up
// stretched by the model's slowdown. Observe moves the calling process to
// the observers' group the file names (the group `hwpemu run` itself is
// in, which the loop neither limits nor measures: the observer is
// scheduled as it would be without hwpemu) and makes every command
// workload.Start starts
// join the closed group while it is stopped before its first
// instruction: the workload is held to the emulated machine's speed, the
// observer is not (docs/emulator.md, "Closed loop").
package emuloop

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/actions/workload"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cgroup"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
)

// Keys of the loop file's closed line that name control groups
// (cgroup.Group.String).
const (
	KeyGroup    = "cgroup"   // the group the command runs in
	KeyObserver = "observer" // the group an observer moves itself to (hwpemu run's own)
)

// Loop is the loop file's content.
type Loop struct {
	Closed bool
	// Fields are the key=value pairs after "closed" or "open", in order
	// (e.g. reason=... for an open loop).
	Fields [][2]string
	// Group and Observer are the closed loop's groups; Observer is nil
	// for a hwpemu that makes none.
	Group, Observer *cgroup.Group
}

// Get returns the value of key, "" when the file has none.
func (l Loop) Get(key string) string {
	for _, kv := range l.Fields {
		if kv[0] == key {
			return kv[1]
		}
	}
	return ""
}

// State is the loop in a few words: "closed", or "open" and why (e.g.
// "open (--open-loop)").
func (l Loop) State() string {
	if l.Closed {
		return "closed"
	}
	if r := l.Get("reason"); r != "" {
		return "open (" + r + ")"
	}
	return "open"
}

// Summary is the loop as a recording's context stores it
// (recording.Emulator.Loop): "closed, slowdown S" (S as the file gives
// it; "closed" alone when it gives none) or State's "open (REASON)".
func (l Loop) Summary() string {
	if s := l.Get("slowdown"); l.Closed && s != "" {
		return "closed, slowdown " + s
	}
	return l.State()
}

// Parse reads the loop file's text: "closed KEY=VALUE..." or "open
// KEY=VALUE...", values without spaces except the last, open's reason,
// which runs to the end of the line.
func Parse(text string) (Loop, error) {
	text = strings.TrimSpace(text)
	word, rest, _ := strings.Cut(text, " ")
	var l Loop
	switch word {
	case "closed":
		l.Closed = true
		for _, f := range strings.Fields(rest) {
			k, v, ok := strings.Cut(f, "=")
			if !ok || k == "" {
				return Loop{}, fmt.Errorf("%s: %q is not KEY=VALUE", sysfs.EmulatedLoop, f)
			}
			l.Fields = append(l.Fields, [2]string{k, v})
		}
		g, err := cgroup.ParseGroup(l.Get(KeyGroup))
		if err != nil {
			return Loop{}, fmt.Errorf("%s: %s: %w", sysfs.EmulatedLoop, KeyGroup, err)
		}
		l.Group = g
		if o := l.Get(KeyObserver); o != "" {
			if l.Observer, err = cgroup.ParseGroup(o); err != nil {
				return Loop{}, fmt.Errorf("%s: %s: %w", sysfs.EmulatedLoop, KeyObserver, err)
			}
		}
	case "open":
		if k, v, ok := strings.Cut(rest, "="); ok && k == "reason" {
			l.Fields = append(l.Fields, [2]string{k, v})
		} else if rest != "" {
			return Loop{}, fmt.Errorf("%s: open: %q is not reason=TEXT", sysfs.EmulatedLoop, rest)
		}
	default:
		return Loop{}, fmt.Errorf("%s: %q is neither closed nor open", sysfs.EmulatedLoop, text)
	}
	return l, nil
}

// Read reads and parses the loop file under fsys; ok is false when there
// is none (real hardware, or a hwpemu that serves none).
func Read(fsys sysfs.FS) (l Loop, ok bool, err error) {
	s, err := fsys.ReadString(sysfs.EmulatedLoop)
	if errors.Is(err, os.ErrNotExist) {
		return Loop{}, false, nil
	}
	if err != nil {
		return Loop{}, false, fmt.Errorf("read %s: %w", sysfs.EmulatedLoop, err)
	}
	l, err = Parse(s)
	return l, err == nil, err
}

// Observe, in a closed loop with an observer group, moves the calling
// process (every thread) to the observer group and makes workload.Start
// put every command it starts in the closed group before its first
// instruction. It does nothing in an open loop. When the move fails the
// caller stays in the closed group, and so do its commands.
func (l Loop) Observe() error {
	if !l.Closed || l.Observer == nil {
		return nil
	}
	if err := l.Observer.Add(os.Getpid()); err != nil {
		return fmt.Errorf("closed loop: leave the command's group for the observer's: %w", err)
	}
	workload.SetGroup(l.Group)
	return nil
}

// StepOut is how hwpprobe, an observer, leaves the closed loop of the
// machine under fsys, if it has one (Observe): a move that fails (not
// root) is a note on stderr, and hwpprobe runs on inside the loop.
func StepOut(fsys sysfs.FS, stderr io.Writer) error {
	l, ok, err := Read(fsys)
	if err != nil || !ok {
		return err
	}
	if err := l.Observe(); err != nil {
		cli.Linef(stderr, "hwpprobe", "note: %v; hwpprobe runs on inside it, held to the emulated machine's speed with its workload", err)
	}
	return nil
}
