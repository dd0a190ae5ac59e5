// SPDX-License-Identifier: Apache-2.0

// Package session runs hwpemu's commands: an emulated machine served
// through FUSE in private namespaces at the real paths while a command
// runs (Run, with the server's and the grafter's halves, ServeNamespace
// and Graft, which hwpemu executes again as hidden commands), at a
// directory until a signal (Serve), the built-in machines (List), and the
// model's steady state per profile (Predict). It owns their processes,
// goroutines and signals; cmd/hwpemu parses flags into its configs.
// docs/hwpemu.md describes the processes.
package session

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/emu"
)

// `hwpemu run` is three processes, so that no process both serves the
// FUSE tree and uses it (a FUSE server that waits on its own mount, as in
// a close(2) of one of its files while it is being killed, never wakes up):
//
//   - hwpemu run itself (Run), outside every namespace: it starts the
//     server and passes signals on; it never mounts anything.
//   - the server (NamespaceCmd, ServeNamespace), PID 1 of a new PID and
//     mount namespace: it serves the tree and never looks at it. When it
//     exits, the kernel kills every process of its PID namespace, and the
//     mount namespace, the only place the mounts ever were, goes with
//     them.
//   - the grafter (GraftCmd, Graft), the server's child: it binds the tree
//     over the real paths, then executes CMD in its place.
//
// The server and the grafter are the running binary (/proc/self/exe)
// executed again with these hidden commands, which must parse the flags
// Run and ServeNamespace give them (Machine.Args and the --parent-mntns,
// --run-pid, --cgroup, --observer-cgroup, --open-reason, --machine,
// --model, --variant and --loop flags written below).
const (
	NamespaceCmd = "__run-in-namespace"
	GraftCmd     = "__graft"
)

// Exit statuses of `hwpemu run` beyond internal/cli's, as a shell gives
// them; run otherwise exits with CMD's status (128+N when CMD was killed
// by signal N).
const (
	ExitNotExec  = 126 // CMD found but not executable
	ExitNotFound = 127 // CMD not found
)

// Machine selects and tunes the emulated machine: what hwpemu's machine
// flags say.
type Machine struct {
	Name        string    // a built-in machine or a description file (emu.Load)
	EnergyStart float64   // joules already counted by every RAPL domain
	Busy        []float64 // fixed busy fractions of the CPUs; nil: follow the host
	TimeScale   float64   // divides the model's time constants
	Variant     string    // the model variant (emu.WithVariant)
	Debug       bool      // log FUSE requests
}

// Load returns the machine with opts and then m's settings applied (Busy
// overrides a load source in opts). An unknown machine, a bad description
// or an unknown variant is a usage error.
func (m Machine) Load(opts ...emu.Option) (*emu.Machine, error) {
	opts = append([]emu.Option{emu.WithEnergyStart(m.EnergyStart), emu.WithTimeScale(m.TimeScale), emu.WithVariant(m.Variant)}, opts...)
	if m.Busy != nil {
		opts = append(opts, emu.WithLoad(emu.ConstLoad(m.Busy))) // last: wins
	}
	em, err := emu.Load(m.Name, opts...)
	if errors.Is(err, emu.ErrUnknownMachine) || errors.Is(err, emu.ErrDescription) || errors.Is(err, emu.ErrVariant) {
		return nil, cli.UsageError{Err: err}
	}
	return em, err
}

// errBusy is the error for a --busy value that is not a list of fractions.
var errBusy = errors.New("must be between 0 and 1: a fraction, or a comma-separated list of them (CPU n gets the n-th, repeated)")

// ParseFractions reads hwpemu's --busy: a comma-separated list of busy
// fractions (Machine.Busy), each a finite number from 0 to 1.
func ParseFractions(s string) ([]float64, error) {
	var list []float64
	for part := range strings.SplitSeq(s, ",") {
		f, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil || math.IsNaN(f) || f < 0 || f > 1 {
			return nil, errBusy
		}
		list = append(list, f)
	}
	return list, nil
}

// FormatFractions writes busy fractions as hwpemu's --busy reads them:
// comma-separated, each as short as it can be.
func FormatFractions(list []float64) string {
	parts := make([]string, len(list))
	for i, f := range list {
		parts[i] = strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strings.Join(parts, ",")
}

// Args returns m's settings as the flags hwpemu's machine commands read
// them, for the server.
func (m Machine) Args() []string {
	a := []string{"--energy-start=" + strconv.FormatFloat(m.EnergyStart, 'g', -1, 64),
		"--time-scale=" + strconv.FormatFloat(m.TimeScale, 'g', -1, 64)}
	if m.Busy != nil {
		a = append(a, "--busy="+FormatFractions(m.Busy))
	}
	if m.Variant != "" {
		a = append(a, "--variant="+m.Variant)
	}
	if m.Debug {
		a = append(a, "--debug")
	}
	return a
}

// banner is what every hwpemu command prints on stderr: the machine's
// name, and the model's and the model variant's summaries when there are
// any, escaped (a description is input).
func banner(w io.Writer, machine, summary, variant string) {
	cli.Linef(w, "hwpemu", "emulated %s (not real hardware)", machine)
	if summary != "" {
		cli.Linef(w, "hwpemu", "model: %s", summary)
	}
	if variant != "" {
		cli.Linef(w, "hwpemu", "model variant: %s", variant)
	}
}

// List writes the built-in machines, one a line: the name and the
// description's summary.
func List(w io.Writer) error {
	for _, n := range emu.Names() {
		m, err := emu.Load(n)
		if err != nil {
			return fmt.Errorf("machine %s: %w", n, err)
		}
		fmt.Fprintf(w, "%-12s %s\n", n, m.Description().Summary)
	}
	return nil
}

// mountName is the mount source mountinfo shows: the machine and the
// hwpemu process, so a leftover mount can be traced to it.
func mountName(machine string, pid int) string {
	return fmt.Sprintf("hwpemu-%s-%d", machine, pid)
}
