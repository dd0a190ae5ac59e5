// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"errors"

	"github.com/spf13/pflag"

	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
)

// ErrEmptyCPUList is the error for -C with an empty or blank list: it
// would otherwise read as "no -C", every CPU.
var ErrEmptyCPUList = errors.New("empty CPU list (leave out -C for every CPU)")

// CPUListVar defines -C/--cpus, a CPU list in perf syntax stored in p as
// given; the list is checked when the flag is parsed, so an empty value
// or a syntax error is a flag (usage) error. Leaving the flag out leaves p
// empty: every CPU.
func CPUListVar(fs *pflag.FlagSet, p *string, usage string) {
	fs.VarP((*cpuListValue)(p), "cpus", "C", usage)
}

type cpuListValue string

func (v *cpuListValue) Set(s string) error {
	l, err := cpus.Parse(s)
	if err != nil {
		return err
	}
	if len(l) == 0 {
		return ErrEmptyCPUList
	}
	*v = cpuListValue(s)
	return nil
}

func (v *cpuListValue) String() string { return string(*v) }
func (v *cpuListValue) Type() string   { return "cpus" }
