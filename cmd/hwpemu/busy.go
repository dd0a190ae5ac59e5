// SPDX-License-Identifier: Apache-2.0

package main

import (
	"github.com/spf13/pflag"

	"github.com/hwpprobe/hwpprobe/internal/emu/session"
)

// busyValue is --busy: nil follows the host's load; otherwise emulated CPU
// n is busy the fraction list[n mod len(list)] of the time
// (session.ParseFractions).
type busyValue []float64

func busyFlag(fs *pflag.FlagSet, p *busyValue, usage string) { fs.Var(p, "busy", usage) }

func (b *busyValue) Set(s string) error {
	list, err := session.ParseFractions(s)
	if err != nil {
		return err
	}
	*b = list
	return nil
}

// String writes the list as Set reads it; "" when unset.
func (b *busyValue) String() string { return session.FormatFractions(*b) }

func (b *busyValue) Type() string { return "fractions" }
