// SPDX-License-Identifier: Apache-2.0

// Package cpus parses and formats CPU lists in the syntax used by perf
// (-C 0-3,8), the kernel's sysfs cpulist files and taskset -c.
package cpus

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MaxCPU bounds CPU numbers accepted by Parse; the kernel's NR_CPUS limit
// for x86-64 is 8192.
const MaxCPU = 8191

// ErrSyntax is wrapped by every error Parse returns.
var ErrSyntax = errors.New("invalid CPU list")

// List is a sorted set of logical CPU numbers without duplicates.
type List []int

// Parse reads a CPU list such as "0-3,8,10-11". Whitespace around the list
// (as in sysfs files) is ignored. An empty string gives an empty list.
func Parse(s string) (List, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return List{}, nil
	}
	var out List
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := parseCPU(lo)
		if err != nil {
			return nil, fmt.Errorf("%w %q: %v", ErrSyntax, s, err)
		}
		b := a
		if isRange {
			if b, err = parseCPU(hi); err != nil {
				return nil, fmt.Errorf("%w %q: %v", ErrSyntax, s, err)
			}
			if b < a {
				return nil, fmt.Errorf("%w %q: range %d-%d runs backwards", ErrSyntax, s, a, b)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func parseCPU(s string) (int, error) {
	if s == "" {
		return 0, errors.New("empty element")
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%q is not a CPU number", s)
	}
	if n > MaxCPU {
		return 0, fmt.Errorf("CPU %d is beyond the kernel's limit of %d", n, MaxCPU+1)
	}
	return int(n), nil
}

// String formats the list compactly, collapsing runs into ranges.
func (l List) String() string {
	var b strings.Builder
	for i := 0; i < len(l); {
		j := i
		for j+1 < len(l) && l[j+1] == l[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(l[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(l[j]))
		}
		i = j + 1
	}
	return b.String()
}

// Contains reports whether cpu is in the list.
func (l List) Contains(cpu int) bool {
	_, ok := slices.BinarySearch(l, cpu)
	return ok
}

// Minus returns the CPUs of l that are not in o.
func (l List) Minus(o List) List {
	out := List{}
	for _, c := range l {
		if !o.Contains(c) {
			out = append(out, c)
		}
	}
	return out
}

// Select resolves a user's -C argument against the online CPUs: an empty
// spec selects every online CPU; CPUs that do not exist or are offline are
// an error naming them, so that a typo never silently narrows a run.
func Select(spec string, online, present List) (List, error) {
	if strings.TrimSpace(spec) == "" {
		return online, nil
	}
	want, err := Parse(spec)
	if err != nil {
		return nil, err
	}
	if len(want) == 0 {
		return nil, fmt.Errorf("%w: no CPUs selected", ErrSyntax)
	}
	if missing := want.Minus(present); len(missing) > 0 && len(present) > 0 {
		return nil, fmt.Errorf("CPU %s does not exist (present: %s)", missing, present)
	}
	if off := want.Minus(online); len(off) > 0 {
		return nil, fmt.Errorf("CPU %s is offline (online: %s)", off, online)
	}
	return want, nil
}
