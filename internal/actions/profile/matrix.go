// SPDX-License-Identifier: Apache-2.0

package profile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/machine/snapshot"
	"github.com/hwpprobe/hwpprobe/internal/reports/verdict"
	"github.com/hwpprobe/hwpprobe/internal/sigquit"
)

// ErrMismatch is wrapped when a matrix differs from the expected one.
var ErrMismatch = errors.New("the matrix differs from the expected one")

// MatrixOptions configure Matrix (`hwpprobe matrix`).
type MatrixOptions struct {
	Options
	Sources       snapshot.Sources
	Profiles      []string
	IgnoreDaemons bool
}

// Matrix applies each profile in turn, starting each from the original
// settings, reads back per core type what the registers hold (or the
// refusal, the planner's or the kernel's), and restores the original
// settings, also on SIGINT, SIGTERM, SIGHUP, SIGQUIT or a panic. Only
// malformed profiles, a machine without cpufreq, not being root, a journal
// left from an earlier run and running daemons stop it before any write.
func Matrix(o MatrixOptions) (out []*Verification, err error) {
	var ps []*Profile
	for _, s := range o.Profiles {
		p, err := Parse(s)
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	m, err := matrixChecks(o, ps)
	if err != nil {
		return nil, err
	}
	sigs := make(chan os.Signal, 4)
	defer sigquit.Notify(sigs, cli.StopSignals...)()
	sw, err := Begin(o.Options, "matrix: "+strings.Join(o.Profiles, " "))
	if err != nil {
		return nil, err
	}
	defer sw.RestoreOnReturn(&err)
	for _, p := range ps {
		if sig := Pending(sigs); sig != nil {
			return out, fmt.Errorf("interrupted by %v", sig)
		}
		v, err := matrixOne(o, sw, m, p)
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}

// matrixChecks makes the checks that stop a matrix before any write.
func matrixChecks(o MatrixOptions, ps []*Profile) (*Machine, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: matrix writes sysfs settings; run it as root", ErrNotRoot)
	}
	m, err := ReadMachine(o.FS)
	if err != nil {
		return nil, fmt.Errorf("read settings: %w", err)
	}
	if err := CheckBeforeWrites(m, ps, o.IgnoreDaemons); err != nil {
		return nil, err
	}
	return m, nil
}

// CheckBeforeWrites makes the checks that stop a run of several profiles
// (matrix, conform) before any write: a machine without cpufreq, a
// tuned: or ppd: profile without its daemon, and a power daemon running
// (unless ignoreDaemons: `--ignore-daemons`).
func CheckBeforeWrites(m *Machine, ps []*Profile, ignoreDaemons bool) error {
	var running []Running
	if !ignoreDaemons {
		running = DetectDaemons(m.FS)
	}
	for _, p := range ps {
		if _, err := m.Plan(p); errors.Is(err, ErrNoCPUFreq) {
			return err
		}
		if err := CheckProfileDaemon(m.FS, p); err != nil {
			return err
		}
		if err := CheckDaemons(running, p, "--ignore-daemons"); err != nil {
			return err
		}
	}
	return nil
}

// matrixOne applies one profile from the original settings and verifies
// it; a refusal is recorded in the verification, not returned.
func matrixOne(o MatrixOptions, sw *Switcher, m *Machine, p *Profile) (*Verification, error) {
	if res, err := sw.Revert(); err != nil {
		return nil, err
	} else if len(res.Failed) > 0 {
		return nil, errors.Join(res.Failed...)
	}
	_, err := sw.Apply(p)
	var we *WriteError
	switch {
	case errors.Is(err, ErrRefused), errors.As(err, &we):
		return &Verification{Profile: p.String(), Emulated: o.FS.Emulated(), Refused: strings.TrimPrefix(err.Error(), ErrRefused.Error()+": ")}, nil
	case err != nil:
		return nil, err
	}
	return Verify(o.Sources, m, p)
}

// WriteMatrix prints the matrix: one line per profile and core type
// (CPUs that ended up alike), with the request register's min, max,
// desired and EPP and the EPB, or the refusal.
func WriteMatrix(w io.Writer, vs []*Verification) {
	if len(vs) > 0 && vs[0].Emulated != "" {
		fmt.Fprintf(w, "EMULATED: machine %q (hwpemu); every value below is emulated\n", vs[0].Emulated)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "profile\tcore type\tCPUs\tgovernor\tEPP (sysfs)\tmin\tmax\tdesired\tEPP\tEPB\trefused")
	for _, v := range vs {
		if v.Refused != "" {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\t%s\n", v.Profile, v.Refused)
			continue
		}
		for _, r := range v.Rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t-\n", v.Profile, r.CoreType, r.CPUs, orDash(r.Governor), orDash(r.EPP),
				optInt(r.Min), optInt(r.Max), optInt(r.Desired), optInt(r.RegEPP), optInt(r.EPB))
		}
	}
	tw.Flush()
}

// MatrixLine is a line where a matrix's text differs from the expected
// text: its number (from 1) and both versions ("" past the end).
type MatrixLine struct {
	N         int
	Want, Got string
}

// maxMatrixFile bounds an expected matrix (ReadMatrixFile): a table of a
// line per profile and core type is a few KiB; the committed golden files
// are under 10 KiB.
const maxMatrixFile = 1 << 20

// ReadMatrixFile reads an expected matrix for CompareMatrix (`matrix
// --expect FILE`: an earlier run's text output). It reads at most 1 MiB
// and fails on a larger file, so that a file that never ends (/dev/zero)
// is refused at once instead of filling memory.
func ReadMatrixFile(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxMatrixFile+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	if len(b) > maxMatrixFile {
		return "", fmt.Errorf("%s is larger than %d bytes: not a matrix table (the text output of an earlier run)", name, maxMatrixFile)
	}
	return string(b), nil
}

// CompareMatrix compares a matrix's text with the expected text, line by
// line, and returns the lines that differ (none: the same).
func CompareMatrix(got, want string) []MatrixLine {
	var diffs []MatrixLine
	for _, l := range matrixLines(got, want) {
		if l.Want != l.Got {
			diffs = append(diffs, l)
		}
	}
	return diffs
}

// matrixLines pairs the lines of a matrix's text and the expected text,
// to the longer one's end.
func matrixLines(got, want string) []MatrixLine {
	g, wnt := strings.Split(strings.TrimRight(got, "\n"), "\n"), strings.Split(strings.TrimRight(want, "\n"), "\n")
	lines := make([]MatrixLine, max(len(g), len(wnt)))
	for i := range lines {
		lines[i].N = i + 1
		if i < len(wnt) {
			lines[i].Want = wnt[i]
		}
		if i < len(g) {
			lines[i].Got = g[i]
		}
	}
	return lines
}

// ExpectCases are the verdicts of matrix --expect FILE (with --ktap or
// --junit): a case "expect" holding a leaf per line of the longer of the
// table and FILE, named "line N", that fails when the lines differ; the
// line is its diagnostic, or the expected and the actual line when they
// differ.
func ExpectCases(got, want, file string) *verdict.Case {
	top := &verdict.Case{Name: "expect"}
	orNone := func(s string) string {
		if s == "" {
			return "(no line)"
		}
		return s
	}
	for _, l := range matrixLines(got, want) {
		name := fmt.Sprintf("line %d", l.N)
		c := verdict.Passf(name, "line: "+l.Got)
		if l.Want != l.Got {
			c = verdict.Failf(name, "differs from line %d of %s", l.N, file)
			c.Diag = []string{"want: " + orNone(l.Want), "got: " + orNone(l.Got)}
		}
		top.Cases = append(top.Cases, c)
	}
	return top
}
