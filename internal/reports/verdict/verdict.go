// SPDX-License-Identifier: Apache-2.0

// Package verdict is a tree of test cases with their outcomes, and two
// writers over it that a lab's tooling reads: KTAP version 1 (the kernel's
// format, docs/conform.md) and JUnit XML. conform, matrix --expect and
// diff --fail-if build a tree; the writers give every verdict the same
// shape whatever command made it.
package verdict

import (
	"errors"
	"fmt"
	"strings"
)

// Result is a case's outcome.
type Result int

// The outcomes, as kselftest's: a case passes, fails or is skipped (with a
// reason).
const (
	Pass Result = iota
	Fail
	Skip
)

func (r Result) String() string {
	switch r {
	case Fail:
		return "fail"
	case Skip:
		return "skip"
	}
	return "pass"
}

// Exit codes, as kselftest's (tools/testing/selftests/kselftest.h).
const (
	ExitPass = 0
	ExitFail = 1
	ExitSkip = 4
)

// Case is one test case: a leaf with its own Result, or a parent whose
// outcome is its cases' (Outcome).
type Case struct {
	Name string
	// Result is a leaf's outcome; a parent's is computed (Outcome),
	// unless it is Skip with a Reason and no cases.
	Result Result
	// Reason says why a case was skipped or failed (one line).
	Reason string
	// Diag holds diagnostic lines: the measured figures.
	Diag []string
	// Cases are the subtests.
	Cases []*Case
}

// Outcome is the case's result: a leaf's own; a parent's Fail when any
// case fails, Skip when every case is skipped, else Pass.
func (c *Case) Outcome() Result {
	if len(c.Cases) == 0 {
		return c.Result
	}
	skipped := true
	for _, s := range c.Cases {
		switch s.Outcome() {
		case Fail:
			return Fail
		case Pass:
			skipped = false
		}
	}
	if skipped {
		return Skip
	}
	return Pass
}

// skipReason is the reason a skipped case gives: its own, or, for a
// parent whose cases all skipped for one reason, that one.
func (c *Case) skipReason() string {
	if c.Reason != "" || len(c.Cases) == 0 {
		return c.Reason
	}
	r := c.Cases[0].skipReason()
	for _, s := range c.Cases[1:] {
		if s.skipReason() != r {
			return "every case skipped"
		}
	}
	return r
}

// Passf, Failf and Skipf make leaves.
func Passf(name string, diag ...string) *Case { return &Case{Name: name, Diag: diag} }

// Failf makes a failed leaf with a reason.
func Failf(name, format string, a ...any) *Case {
	return &Case{Name: name, Result: Fail, Reason: fmt.Sprintf(format, a...)}
}

// Skipf makes a skipped leaf with a reason.
func Skipf(name, format string, a ...any) *Case {
	return &Case{Name: name, Result: Skip, Reason: fmt.Sprintf(format, a...)}
}

// Exit is the kselftest exit code for a plan: 1 when any case fails, 4
// when every case is skipped (or there is none), else 0.
func Exit(cases []*Case) int {
	root := &Case{Cases: cases}
	if len(cases) == 0 {
		return ExitSkip
	}
	switch root.Outcome() {
	case Fail:
		return ExitFail
	case Skip:
		return ExitSkip
	}
	return ExitPass
}

// Summary is the one line a command prints on stderr with Exit's status
// when it is not 0: how many checks (leaves) failed of how many, or that
// every one was skipped, with the reason when one skip stands for the
// whole plan.
func Summary(cases []*Case) string {
	var total, failed int
	var walk func(cs []*Case)
	walk = func(cs []*Case) {
		for _, c := range cs {
			if len(c.Cases) > 0 {
				walk(c.Cases)
				continue
			}
			total++
			if c.Outcome() == Fail {
				failed++
			}
		}
	}
	walk(cases)
	switch Exit(cases) {
	case ExitFail:
		return fmt.Sprintf("%d of %d checks failed", failed, total)
	case ExitSkip:
		if len(cases) == 1 && len(cases[0].Cases) == 0 && cases[0].Reason != "" {
			return "every check skipped: " + cases[0].Reason
		}
		return "every check skipped"
	}
	return fmt.Sprintf("%d checks passed", total)
}

// ErrName is returned for a case name a writer cannot carry.
var ErrName = errors.New("bad case name")

// checkNames refuses names that would break a KTAP line: empty, a line
// break, or a '#' (which starts a directive).
func checkNames(cases []*Case) error {
	for _, c := range cases {
		if c.Name == "" || strings.ContainsAny(c.Name, "#\n\r") {
			return fmt.Errorf("%w %q: empty, or holds '#' or a line break", ErrName, c.Name)
		}
		if err := checkNames(c.Cases); err != nil {
			return err
		}
	}
	return nil
}

// oneLine folds line breaks so that a reason or diagnostic stays one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.NewReplacer("\n", " ", "\r", " ").Replace(s)), " ")
}
