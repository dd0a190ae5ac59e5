// SPDX-License-Identifier: Apache-2.0

// Package complete holds the shell completion both commands register
// with cobra (ValidArgsFunction, RegisterFlagFunc): profiles,
// register names, machine names, words from a list.
package complete

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
)

// Func is what cobra calls to complete an argument or a flag's
// value.
type Func = func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective)

// Words completes from words; suffix is added to each (e.g. "="
// for REG=VALUE, with no space after it). Files complete as well when
// files is true (a machine is a name or a description file).
func Words(words func() []string, suffix string, files bool) Func {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, w := range words() {
			if strings.HasPrefix(strings.ToLower(w+suffix), strings.ToLower(toComplete)) {
				out = append(out, w+suffix)
			}
		}
		d := cobra.ShellCompDirectiveNoFileComp
		if files {
			d = cobra.ShellCompDirectiveDefault
		}
		if suffix != "" {
			d |= cobra.ShellCompDirectiveNoSpace
		}
		return out, d
	}
}

// List completes the last element of a comma-separated list of
// words (--msr HWP_REQUEST,EPB).
func List(words func() []string) Func {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		head := toComplete[:strings.LastIndex(toComplete, ",")+1]
		last := strings.ToLower(toComplete[len(head):])
		var out []string
		for _, w := range words() {
			if strings.HasPrefix(strings.ToLower(w), last) {
				out = append(out, head+w)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}

// Profiles completes profiles (profile.Complete) with the
// governors governors returns. Files complete as well when files is true
// (diff's EXPERIMENT and .hwpr arguments).
func Profiles(governors func() []string, files bool) Func {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		cands, partial := profile.Complete(toComplete, governors())
		d := cobra.ShellCompDirectiveNoFileComp
		if files {
			d = cobra.ShellCompDirectiveDefault
		}
		if partial {
			d |= cobra.ShellCompDirectiveNoSpace
		}
		return cands, d
	}
}

// Flag registers f as the completion of cmd's flag name; a
// flag that does not exist is a programming error, which panics.
func Flag(cmd *cobra.Command, name string, f Func) {
	if err := cmd.RegisterFlagCompletionFunc(name, f); err != nil {
		panic(fmt.Sprintf("completion of --%s: %v", name, err))
	}
}

// FirstThen completes the first argument with first and the others with
// rest (hwpemu predict MACHINE PROFILE...); nil completes nothing.
func FirstThen(first, rest Func) Func {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		f := rest
		if len(args) == 0 {
			f = first
		}
		if f == nil {
			return nil, cobra.ShellCompDirectiveDefault
		}
		return f(cmd, args, toComplete)
	}
}
