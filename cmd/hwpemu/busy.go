// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// errBusy is the error for a --busy value that is not a list of fractions.
var errBusy = errors.New("must be between 0 and 1: a fraction, or a comma-separated list of them (CPU n gets the n-th, repeated)")

// busyValue is --busy: nil follows the host's load; otherwise emulated CPU
// n is busy the fraction list[n mod len(list)] of the time (emu.ConstLoad).
// Each fraction must be a finite number from 0 to 1.
type busyValue []float64

func busyFlag(fs *pflag.FlagSet, p *busyValue, usage string) { fs.Var(p, "busy", usage) }

func (b *busyValue) Set(s string) error {
	var list []float64
	for part := range strings.SplitSeq(s, ",") {
		f, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil || math.IsNaN(f) || f < 0 || f > 1 {
			return errBusy
		}
		list = append(list, f)
	}
	*b = list
	return nil
}

// String writes the list as Set reads it; "" when unset.
func (b *busyValue) String() string {
	parts := make([]string, len(*b))
	for i, f := range *b {
		parts[i] = strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strings.Join(parts, ",")
}

func (b *busyValue) Type() string { return "fractions" }
