// SPDX-License-Identifier: Apache-2.0

package profile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/hwpprobe/hwpprobe/internal/actions/workload"
	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/machine/snapshot"
	"github.com/hwpprobe/hwpprobe/internal/sigquit"
)

// ErrNotRoot is wrapped when changing settings is asked for without root.
var ErrNotRoot = errors.New("not root")

// RunOptions configure Run (`hwpprobe apply`).
type RunOptions struct {
	Options
	Sources       snapshot.Sources // read-only sources for the verification
	Profile       string
	DryRun        bool
	IgnoreDaemons bool
	Command       []string             // run under the profile, then restore; none: leave it applied
	Cred          *workload.Credential // the user CMD runs as (nil: hwpprobe's)
	Out           io.Writer            // the report
	Stdin         io.Reader            // CMD's standard streams
	Stdout        io.Writer
	Stderr        io.Writer
}

// Run applies a profile: it parses and plans it, refuses what the machine
// or the kernel would refuse and running power daemons (all before any
// write), journals the settings, writes the profile, verifies it, and
// then either leaves it applied (no command: `hwpprobe restore` undoes it)
// or runs the command under it and restores the settings on every way
// out: the command's end, a signal to hwpprobe, a panic. It returns the
// command's exit status.
func Run(o RunOptions) (code int, err error) {
	p, m, err := prepare(o)
	if err != nil {
		return 0, err
	}
	if o.DryRun {
		return 0, dryRun(o, m, p)
	}
	sigs := make(chan os.Signal, 4)
	defer sigquit.Notify(sigs, cli.StopSignals...)()
	sw, err := Begin(o.Options, p.Text)
	if err != nil {
		return 0, err
	}
	defer sw.RestoreOnPanic()
	if _, err := sw.Apply(p); err != nil {
		return 0, restoreAfter(o, sw, err)
	}
	if sig := Pending(sigs); sig != nil {
		return signalStatus(sig), restoreAfter(o, sw, fmt.Errorf("interrupted by %v", sig))
	}
	if v, err := Verify(o.Sources, m, p); err == nil {
		WriteVerification(o.Out, v)
	} else {
		fmt.Fprintf(o.Out, "verify: %v\n", err)
	}
	if len(o.Command) == 0 {
		fmt.Fprintf(o.Out, "applied %s; the settings stay until `hwpprobe restore` (journal %s)\n", p, o.journalDir())
		return 0, sw.Release()
	}
	if sig := Pending(sigs); sig != nil {
		return signalStatus(sig), restoreAfter(o, sw, fmt.Errorf("interrupted by %v", sig))
	}
	code = runCommand(o, sigs)
	return code, restoreAfter(o, sw, nil)
}

// prepare parses and plans the profile and makes every check that needs
// no write.
func prepare(o RunOptions) (*Profile, *Machine, error) {
	p, err := Parse(o.Profile)
	if err != nil {
		return nil, nil, err
	}
	if !o.DryRun && os.Geteuid() != 0 {
		return nil, nil, fmt.Errorf("%w: apply writes sysfs settings; run it as root (sudo hwpprobe apply ...), or add --dry-run", ErrNotRoot)
	}
	m, err := ReadMachine(o.FS)
	if err != nil {
		return nil, nil, fmt.Errorf("read settings: %w", err)
	}
	if _, err := m.Plan(p); err != nil {
		return nil, nil, err
	}
	if err := CheckProfileDaemon(o.FS, p); err != nil {
		return nil, nil, err
	}
	if !o.IgnoreDaemons {
		if err := CheckDaemons(DetectDaemons(o.FS), p, "--ignore-daemons"); err != nil {
			return nil, nil, err
		}
	}
	return p, m, nil
}

// Pending returns a signal waiting on sigs, or nil without waiting.
func Pending(sigs chan os.Signal) os.Signal {
	select {
	case s := <-sigs:
		return s
	default:
		return nil
	}
}

// signalStatus is the shell's status for death by sig.
func signalStatus(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}

// runCommand runs the command, forwarding the caught signals to it, and
// returns its shell status.
func runCommand(o RunOptions, sigs chan os.Signal) int {
	dir, _ := os.Getwd()
	proc, err := workload.Start(workload.Spec{Argv: o.Command, Cred: o.Cred, Dir: dir,
		Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr}, nil)
	if err != nil {
		fmt.Fprintf(o.Stderr, "hwpprobe: %v\n", err)
		return workload.ExitStatus(err)
	}
	res := proc.Wait(sigs)
	if res.Err != nil {
		fmt.Fprintf(o.Stderr, "hwpprobe: %v\n", res.Err)
	}
	return res.ExitCode
}

// restoreAfter restores the switcher's settings and reports the restore;
// cause is what ended the run (nil for the command's end).
func restoreAfter(o RunOptions, sw *Switcher, cause error) error {
	res, err := sw.Restore()
	WriteRestore(o.Out, res)
	return errors.Join(cause, err)
}

// dryRun prints the writes the profile would make and the journal it
// would keep.
func dryRun(o RunOptions, m *Machine, p *Profile) error {
	plan, err := m.Plan(p)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "dry run: %s would make %d writes:\n", p, len(plan.Writes))
	for _, w := range plan.Writes {
		fmt.Fprintf(o.Out, "  %s\n", w)
	}
	if p.Kind == Tuned || p.Kind == PPD {
		fmt.Fprintf(o.Out, "  switch %s to %s\n", map[Kind]string{Tuned: "tuned-adm profile", PPD: "powerprofilesctl set"}[p.Kind], p.Name)
	}
	fmt.Fprintf(o.Out, "and keep a journal in %s of these settings until they are restored:\n", o.journalDir())
	for _, line := range SummarizeState(m.State) {
		fmt.Fprintf(o.Out, "  %s\n", line)
	}
	return nil
}

// SummarizeState lists a state's settings, CPUs with the same value
// together ("cpu0-3 scaling_governor: powersave").
func SummarizeState(s State) []string {
	var out []string
	for _, k := range globalKeys {
		if v, ok := s.Globals[k]; ok {
			out = append(out, fmt.Sprintf("%s: %s", k, v))
		}
	}
	for _, k := range cpuKeys {
		var order []string
		groups := map[string][]int{}
		for _, c := range s.CPUs {
			v, ok := c.Values[k]
			if !ok {
				continue
			}
			if _, seen := groups[v]; !seen {
				order = append(order, v)
			}
			groups[v] = append(groups[v], c.CPU)
		}
		for _, v := range order {
			out = append(out, fmt.Sprintf("cpu%s %s: %s", listString(groups[v]), k, v))
		}
	}
	for d, v := range s.Daemons {
		out = append(out, fmt.Sprintf("%s profile: %s", d, v))
	}
	return out
}

// WriteRestore prints what a restore did: its writes and refusals, and
// every setting that did not return.
func WriteRestore(w io.Writer, res *RestoreResult) {
	if res == nil {
		return
	}
	if res.Journal == nil {
		fmt.Fprintln(w, "restore: no journal, nothing to restore")
		return
	}
	fmt.Fprintf(w, "restore: %d writes back to the settings of %s\n", len(res.Writes), res.Journal.Started.Format("2006-01-02 15:04:05 MST"))
	for _, e := range res.Failed {
		fmt.Fprintf(w, "  failed: %v\n", e)
	}
	if len(res.NotReturned) > 0 {
		fmt.Fprintf(w, "restore: %d settings did not return:\n  %s\n", len(res.NotReturned), strings.Join(res.NotReturned, "\n  "))
	} else {
		fmt.Fprintln(w, "restore: every setting is back (read back from sysfs)")
	}
}
