// SPDX-License-Identifier: Apache-2.0

// Package perfcount counts perf events per CPU in groups that are read
// atomically with one read(2): the msr PMU's aperf/mperf/tsc, hardware
// cycles/instructions/ref-cycles, the power PMU's energy-* events (with
// their .scale and .unit) and software events.
//
// It probes what exists instead of failing: an event the kernel or the
// machine lacks comes back as ErrUnsupported (wrapped with its name), a
// PMU that is not registered as ErrNoPMU, so that callers show "not
// supported" rather than a zero. Counts are scaled by
// time_enabled/time_running when the kernel multiplexed the group.
//
// github.com/hodgesds/perf-utils supplies the hardware and software event
// attributes; discovery, grouping and reading are done here with
// golang.org/x/sys/unix because perf-utils reads only the real /sys, keeps
// a package-global buffer pool, allocates on every read, does not request
// PERF_FORMAT_ID, sets exclude_kernel (which the msr and power PMUs
// reject with EINVAL) and does not scale multiplexed counts (see
// docs/perfcount.md).
package perfcount

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
)

// Sentinel errors; errors from this package wrap one of them.
var (
	// ErrUnsupported: the event does not exist on this machine or kernel
	// (not listed by its PMU, or perf_event_open answered ENOENT,
	// EOPNOTSUPP or ENODEV).
	ErrUnsupported = errors.New("event not supported")
	// ErrNoPMU: no event source device of that name is registered.
	ErrNoPMU = errors.New("PMU not present")
	// ErrPermission: perf_event_open refused (run as root, or lower
	// /proc/sys/kernel/perf_event_paranoid).
	ErrPermission = errors.New("perf_event_open not permitted (run as root)")
)

// DevicesDir is where the kernel lists PMUs, relative to the system root.
const DevicesDir = "sys/bus/event_source/devices"

// PMU is one event source device: /sys/bus/event_source/devices/<name>.
type PMU struct {
	Name string
	// Type is perf_event_attr.type for the PMU's events.
	Type uint32
	// CPUs is the PMU's cpumask: the CPUs on which its events must be
	// opened (one per package for the power PMU); empty when the PMU has
	// no cpumask file (any CPU).
	CPUs cpus.List
	// Events are the named events of events/, sorted by name.
	Events []Event
	// formats maps a format term ("event", "umask") to its config field.
	formats map[string]formatField
}

// Event is a named event of a PMU, with the perf_event_attr config built
// from the PMU's format/ files.
type Event struct {
	PMU     string
	Name    string
	Type    uint32
	Config  uint64
	Config1 uint64
	Config2 uint64
	// Scale multiplies a count into Unit (events/<name>.scale; 1 when
	// absent). The power PMU's energy events count in units of
	// 2^-32 J = 2.3283064365386962890625e-10 J.
	Scale float64
	// Unit is events/<name>.unit ("Joules" for energy; "" when absent).
	Unit string
}

// String returns the event in perf's syntax, "pmu/name/".
func (e Event) String() string { return e.PMU + "/" + e.Name + "/" }

// formatField says where a format term's bits go: config, config1 or
// config2, as a list of bit ranges from the least significant.
type formatField struct {
	config int // 0, 1, 2
	ranges [][2]uint
}

// ProbePMU reads the PMU called name under root ("/" for the running
// system). A PMU that is not registered returns an error wrapping ErrNoPMU.
func ProbePMU(root, name string) (*PMU, error) {
	dir := filepath.Join(root, DevicesDir, name)
	typ, err := readTrim(filepath.Join(dir, "type"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("perf %s PMU (%s): %w", name, dir, ErrNoPMU)
	}
	if err != nil {
		return nil, fmt.Errorf("perf %s PMU: %w", name, err)
	}
	t, err := strconv.ParseUint(typ, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("perf %s PMU: bad type %q", name, typ)
	}
	p := &PMU{Name: name, Type: uint32(t), formats: map[string]formatField{}}
	if mask, err := readTrim(filepath.Join(dir, "cpumask")); err == nil {
		if p.CPUs, err = cpus.Parse(mask); err != nil {
			return nil, fmt.Errorf("perf %s PMU cpumask: %w", name, err)
		}
	}
	fents, _ := os.ReadDir(filepath.Join(dir, "format"))
	for _, fe := range fents {
		s, err := readTrim(filepath.Join(dir, "format", fe.Name()))
		if err != nil {
			return nil, fmt.Errorf("perf %s PMU format %s: %w", name, fe.Name(), err)
		}
		ff, err := parseFormat(s)
		if err != nil {
			return nil, fmt.Errorf("perf %s PMU format %s: %w", name, fe.Name(), err)
		}
		p.formats[fe.Name()] = ff
	}
	eents, _ := os.ReadDir(filepath.Join(dir, "events"))
	for _, ee := range eents {
		n := ee.Name()
		if strings.Contains(n, ".") {
			continue // .scale, .unit, .snapshot, .per-pkg
		}
		spec, err := readTrim(filepath.Join(dir, "events", n))
		if err != nil {
			return nil, fmt.Errorf("perf %s PMU event %s: %w", name, n, err)
		}
		ev := Event{PMU: name, Name: n, Type: p.Type, Scale: 1}
		if err := p.applyTerms(&ev, spec); err != nil {
			return nil, fmt.Errorf("perf event %s/%s/: %w", name, n, err)
		}
		if s, err := readTrim(filepath.Join(dir, "events", n+".scale")); err == nil {
			if ev.Scale, err = strconv.ParseFloat(s, 64); err != nil {
				return nil, fmt.Errorf("perf event %s/%s/ scale %q: %w", name, n, s, err)
			}
		}
		ev.Unit, _ = readTrim(filepath.Join(dir, "events", n+".unit"))
		p.Events = append(p.Events, ev)
	}
	sort.Slice(p.Events, func(i, j int) bool { return p.Events[i].Name < p.Events[j].Name })
	return p, nil
}

// Event returns the named event, or an error wrapping ErrUnsupported when
// the PMU does not list it.
func (p *PMU) Event(name string) (Event, error) {
	for _, e := range p.Events {
		if e.Name == name {
			return e, nil
		}
	}
	var have []string
	for _, e := range p.Events {
		have = append(have, e.Name)
	}
	return Event{}, fmt.Errorf("%s/%s/ (the %s PMU lists only: %s): %w",
		p.Name, name, p.Name, strings.Join(have, ", "), ErrUnsupported)
}

// applyTerms parses an event string such as "event=0x02,umask=0x1" and
// sets the config fields through the PMU's formats.
func (p *PMU) applyTerms(ev *Event, spec string) error {
	for _, term := range strings.Split(spec, ",") {
		term = strings.TrimSpace(term)
		if term == "" {
			continue
		}
		k, v, hasV := strings.Cut(term, "=")
		val := uint64(1)
		if hasV {
			n, err := strconv.ParseUint(v, 0, 64)
			if err != nil {
				return fmt.Errorf("term %q: %w", term, err)
			}
			val = n
		}
		ff, ok := p.formats[k]
		if !ok {
			return fmt.Errorf("term %q: no format/%s", term, k)
		}
		cfg := &ev.Config
		switch ff.config {
		case 1:
			cfg = &ev.Config1
		case 2:
			cfg = &ev.Config2
		}
		*cfg |= ff.place(val)
	}
	return nil
}

// place spreads val over the field's bit ranges.
func (f formatField) place(val uint64) uint64 {
	var out uint64
	for _, r := range f.ranges {
		width := r[1] - r[0] + 1
		var mask uint64 = ^uint64(0)
		if width < 64 {
			mask = 1<<width - 1
		}
		out |= (val & mask) << r[0]
		val >>= width
	}
	return out
}

// parseFormat parses a format file: "config:0-7", "config1:0-7,32-35",
// "config:21" (single bit).
func parseFormat(s string) (formatField, error) {
	name, bits, ok := strings.Cut(s, ":")
	if !ok {
		return formatField{}, fmt.Errorf("bad format %q", s)
	}
	var ff formatField
	switch name {
	case "config":
	case "config1":
		ff.config = 1
	case "config2":
		ff.config = 2
	default:
		return formatField{}, fmt.Errorf("format %q: unknown field %q", s, name)
	}
	for _, r := range strings.Split(bits, ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		a, err := strconv.ParseUint(lo, 10, 8)
		if err != nil || a > 63 {
			return formatField{}, fmt.Errorf("format %q: bad bit %q", s, lo)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(hi, 10, 8); err != nil || b > 63 || b < a {
				return formatField{}, fmt.Errorf("format %q: bad range %q", s, r)
			}
		}
		ff.ranges = append(ff.ranges, [2]uint{uint(a), uint(b)})
	}
	return ff, nil
}

func readTrim(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}
