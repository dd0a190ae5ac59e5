// SPDX-License-Identifier: Apache-2.0

// Package clitest sends hostile text through every flag and argument of a
// built command and checks what it prints on stderr: the tests of
// cmd/hwpprobe and cmd/hwpemu that their messages stay on one line and
// carry no raw control characters (cli.OneLine).
package clitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Evil is the hostile input: a newline, an escape sequence that clears a
// terminal, a right-to-left override and a carriage return.
const Evil = "x\ny\x1b[2J\u202e\r"

// benign replaces Evil in the run that sets the expected number of lines.
const benign = "x"

// Case is one invocation: Args with Evil in one place.
type Case struct {
	Args []string
	// Lines allows more than one line on stderr (a command that ran and
	// printed its own report before failing, such as record's summary).
	Lines bool
}

// Base is an invocation of a subcommand that gets past argument checks,
// so that the hostile value reaches the code that uses it. Flags holds
// flags and their values; Args the positional arguments (after "--" when
// Dash).
type Base struct {
	Flags []string
	Args  []string
	Dash  bool
	// Lines: see Case.
	Lines bool
}

// Cases returns, for every visible subcommand of root, one case per flag
// (local and inherited, as --name=Evil), and one per positional argument
// of its Base (that argument replaced by Evil), or a single Evil argument
// when it has none. bases is keyed by the command path without the root's
// name ("record", "workload burn").
func Cases(root *cobra.Command, bases map[string]Base) []Case {
	var out []Case
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if !sub.Hidden && sub.Name() != "help" && sub.Name() != "completion" {
				walk(sub)
			}
		}
		if c == root {
			out = append(out, Case{Args: []string{Evil}})
			return
		}
		path := strings.Fields(strings.TrimPrefix(c.CommandPath(), root.Name()+" "))
		b := bases[strings.Join(path, " ")]
		visit := func(f *pflag.Flag) {
			if f.Name == "help" {
				return
			}
			flags := []string{"--" + f.Name + "=" + Evil}
			for i := 0; i < len(b.Flags); i++ {
				if b.Flags[i] == "--"+f.Name || (f.Shorthand != "" && b.Flags[i] == "-"+f.Shorthand) {
					i++ // replaced by the hostile value
					continue
				}
				flags = append(flags, b.Flags[i])
			}
			out = append(out, Case{Args: join(path, flags, b.Args, b.Dash), Lines: b.Lines})
		}
		c.LocalFlags().VisitAll(visit)
		c.InheritedFlags().VisitAll(visit)
		if len(b.Args) == 0 {
			out = append(out, Case{Args: join(path, b.Flags, []string{Evil}, b.Dash), Lines: b.Lines})
		}
		for i := range b.Args {
			args := slices.Clone(b.Args)
			args[i] = Evil
			out = append(out, Case{Args: join(path, b.Flags, args, b.Dash), Lines: b.Lines})
		}
	}
	walk(root)
	return out
}

func join(path, flags, args []string, dash bool) []string {
	out := append(slices.Clone(path), flags...)
	if dash {
		out = append(out, "--")
	}
	return append(out, args...)
}

// Check runs bin with c.Args and with Evil replaced by a benign word, in
// dir, each bounded by timeout, and returns why its stderr is not right:
// raw control characters, invalid UTF-8, separators or bidirectional
// controls; more lines than with the benign word; more than one line when
// it failed (unless c.Lines).
func Check(ctx context.Context, bin, dir string, c Case, timeout time.Duration) error {
	code, stderr, err := run(ctx, bin, dir, c.Args, timeout)
	if err != nil {
		return err
	}
	if err := printable(stderr); err != nil {
		return fmt.Errorf("exit %d, stderr %q: %w", code, stderr, err)
	}
	lines := strings.Count(stderr, "\n")
	if !strings.HasSuffix(stderr, "\n") && stderr != "" {
		lines++
	}
	if code != 0 && lines != 1 && !c.Lines {
		return fmt.Errorf("exit %d with %d lines on stderr, want one: %q", code, lines, stderr)
	}
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = strings.ReplaceAll(a, Evil, benign)
	}
	_, want, err := run(ctx, bin, dir, args, timeout)
	if err != nil {
		return err
	}
	if n := strings.Count(want, "\n"); lines > n && lines > 1 {
		return fmt.Errorf("%d lines on stderr, %d with %q instead: %q", lines, n, benign, stderr)
	}
	return nil
}

func run(ctx context.Context, bin, dir string, args []string, timeout time.Duration) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		return 0, "", fmt.Errorf("%q did not end within %v", args, timeout)
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return 0, "", err
	}
	return cmd.ProcessState.ExitCode(), stderr.String(), nil
}

// printable returns an error for anything in s but printable runes,
// spaces and line ends.
func printable(s string) error {
	for i, r := range s {
		switch {
		case r == utf8.RuneError:
			return fmt.Errorf("invalid UTF-8 at byte %d", i)
		case r == '\n':
		case r != ' ' && !unicode.IsPrint(r):
			return fmt.Errorf("raw %U at byte %d", r, i)
		}
	}
	return nil
}
