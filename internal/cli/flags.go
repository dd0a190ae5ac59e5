// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/spf13/pflag"
)

// Range-checked numeric flags. pflag's own Float64, Duration and Int
// flags take NaN, infinities, 1e300 and negative values, which then
// freeze counters or wait for ever; these refuse, at parse time, any value
// outside [lo, hi], so the command's flag error function turns the error
// into one usage line (exit 2): for example
//
//	invalid argument "NaN" for "--busy" flag: not a finite number (0 to 1)

// FloatVar defines a float64 flag on fs whose value must be a finite
// number from lo to hi. value is the default and need not be in range
// (a sentinel such as -1 for "not given").
func FloatVar(fs *pflag.FlagSet, p *float64, name string, value, lo, hi float64, usage string) {
	*p = value
	fs.Var(&floatValue{p: p, r: span[float64]{lo, hi, "small", "large"}}, name, usage)
}

// DurationVarP defines a time.Duration flag on fs, with an optional
// shorthand, whose value must be a Go duration from lo to hi. value is the
// default and need not be in range (0 for "not given").
func DurationVarP(fs *pflag.FlagSet, p *time.Duration, name, shorthand string, value, lo, hi time.Duration, usage string) {
	*p = value
	fs.VarP(&durationValue{p: p, r: span[time.Duration]{lo, hi, "short", "long"}}, name, shorthand, usage)
}

// IntVarP defines an int flag on fs, with an optional shorthand, whose
// value must be a whole number from lo to hi. value is the default and
// need not be in range.
func IntVarP(fs *pflag.FlagSet, p *int, name, shorthand string, value, lo, hi int, usage string) {
	*p = value
	fs.VarP(&intValue{p: p, r: span[int]{lo, hi, "small", "large"}}, name, shorthand, usage)
}

// span is the range [lo, hi] a flag accepts, with the words for a value
// below and above it.
type span[T int | float64 | time.Duration] struct {
	lo, hi       T
	below, above string
}

func (s span[T]) String() string { return fmt.Sprintf("%v to %v", s.lo, s.hi) }

// check returns nil for v within the span, or why not.
func (s span[T]) check(v T) error {
	switch {
	case v < 0 && s.lo >= 0:
		return fmt.Errorf("cannot be negative (%v)", s)
	case v < s.lo:
		return fmt.Errorf("too %s (%v)", s.below, s)
	case v > s.hi:
		return fmt.Errorf("too %s (%v)", s.above, s)
	}
	return nil
}

type floatValue struct {
	p *float64
	r span[float64]
}

func (v *floatValue) String() string { return strconv.FormatFloat(*v.p, 'g', -1, 64) }
func (v *floatValue) Type() string   { return "float" }

func (v *floatValue) Set(s string) error {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("not a finite number (%v)", v.r)
	}
	if err := v.r.check(f); err != nil {
		return err
	}
	*v.p = f
	return nil
}

type durationValue struct {
	p *time.Duration
	r span[time.Duration]
}

func (v *durationValue) String() string { return v.p.String() }
func (v *durationValue) Type() string   { return "duration" }

func (v *durationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("not a duration such as 100ms or 2s (%v)", v.r)
	}
	if err := v.r.check(d); err != nil {
		return err
	}
	*v.p = d
	return nil
}

type intValue struct {
	p *int
	r span[int]
}

func (v *intValue) String() string { return strconv.Itoa(*v.p) }
func (v *intValue) Type() string   { return "int" }

func (v *intValue) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, strconv.IntSize)
	switch {
	case errors.Is(err, strconv.ErrRange) && n < 0: // n is the smallest int
		if err := v.r.check(int(n)); err != nil {
			return err
		}
		return fmt.Errorf("too %s (%v)", v.r.below, v.r)
	case errors.Is(err, strconv.ErrRange):
		return fmt.Errorf("too %s (%v)", v.r.above, v.r)
	case err != nil:
		return fmt.Errorf("not a whole number (%v)", v.r)
	}
	if err := v.r.check(int(n)); err != nil {
		return err
	}
	*v.p = int(n)
	return nil
}
