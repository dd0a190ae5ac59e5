// SPDX-License-Identifier: Apache-2.0

package experiment

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hwpprobe/hwpprobe/internal/actions/profile"
	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/kernel/sysfs"
)

// ErrNoChain is wrapped when explain finds no chain of one-field steps
// between two profiles with the kernel's knobs on this machine.
var ErrNoChain = errors.New("no one-field chain")

// ChainConfig is what BuildChain needs: the machine and the two profiles.
type ChainConfig struct {
	Root       string
	FS         sysfs.FS
	JournalDir string // "": profile.JournalDir()
	A, B       string
	// AllowDaemons applies the profiles beside power daemons that also
	// write these settings; without it BuildChain refuses, naming one.
	AllowDaemons bool
}

// Chain is hwpprobe explain's chain from profile A to profile B
// (docs/explain.md): the sides of its experiment, in the order run, and
// what each leaves in the registers.
type Chain struct {
	Sides   []string                // profiles: the chain from A to B, then the corner
	Roles   []string                // what each side is, in words
	Explain recording.Explain       // the chain and the corners, as indices into Sides
	Regs    []*profile.Verification // what each side left, per core type (Probe)
	Changed []string                // the fields that differ between A and B
}

// BuildChain derives the chain: it reads what A and B leave in the
// request registers and EPB (Probe: each applied in turn and restored),
// builds on B's settings a register twin of A (every changed field set
// back to A's value through the kernel's knobs: min_perf_pct or
// scaling_min_freq for min, the limits A sets for max, epp=N, epb=N),
// then undoes one field at a time, in RequestFields' order, ending at B;
// with two changed fields the fourth corner of the 2x2 design (the first
// field at A's value, the second at B's) is added. It probes the new
// profiles and checks that each step changes its one field and nothing
// else; when not, the error wraps ErrNoChain. A and B the same profile is
// an error wrapping ErrConfig.
func BuildChain(c ChainConfig) (*Chain, error) {
	pa, err := profile.Parse(c.A)
	if err != nil {
		return nil, err
	}
	pb, err := profile.Parse(c.B)
	if err != nil {
		return nil, err
	}
	if pa.String() == pb.String() {
		return nil, fmt.Errorf("%w: A and B are the same profile %s: nothing to explain", ErrConfig, pa)
	}
	if pb.Kind != profile.Sysfs {
		return nil, fmt.Errorf("%w: B %s is not a set of sysfs settings; explain builds the chain on B's settings", ErrConfig, pb)
	}
	m, err := profile.ReadMachine(c.FS)
	if err != nil {
		return nil, fmt.Errorf("read settings: %w", err)
	}
	var running []profile.Running
	if !c.AllowDaemons {
		running = profile.DetectDaemons(c.FS)
	}
	for i, p := range []*profile.Profile{pa, pb} {
		if _, err := m.Plan(p); err != nil {
			return nil, fmt.Errorf("side %s: %w", label(i), err)
		}
		if err := profile.CheckDaemons(running, p, "--allow-daemons"); err != nil {
			return nil, err
		}
	}
	ends, err := Probe(c.Root, c.FS, c.JournalDir, []string{c.A, c.B})
	if err != nil {
		return nil, err
	}
	for i, v := range ends {
		if v.Refused != "" {
			return nil, fmt.Errorf("side %s: %s: refused: %s", label(i), v.Profile, v.Refused)
		}
	}
	changed, ok := profile.ChangedFields(ends[0], ends[1])
	if !ok {
		return nil, fmt.Errorf("%w: the request registers cannot be read here (%s)", ErrNoChain, ends[0].Unreadable)
	}
	ch, err := chainOnB(c, pa, pb, ends, changed, m)
	if errors.Is(err, ErrNoChain) && pa.Kind == profile.Sysfs {
		// B's kernel path cannot hold A's fields (powersave's min under
		// performance): go the other way, B's fields on A's settings.
		if back, berr := chainOnA(c, pa, pb, ends, changed, m); berr == nil {
			return back, nil
		}
	}
	return ch, err
}

// chainOnB is the chain A, A's register twin on B's settings, then one
// knob fewer at a time to B, probed and checked.
func chainOnB(c ChainConfig, pa, pb *profile.Profile, ends []*profile.Verification, changed []string, m *profile.Machine) (*Chain, error) {
	knobs, err := knobsFor(changed, pa, ends[0], m)
	if err != nil {
		return nil, err
	}
	ch := &Chain{Changed: changed}
	ch.add(c.A, "A", nil)
	for k := range changed {
		p, err := withKnobs(pb, slices.Concat(knobs[k:]...))
		if err != nil {
			return nil, err
		}
		if k == 0 {
			if p != pa.String() { // else A already is the twin on B's settings
				ch.add(p, "register twin of A, on B's settings", []string{})
			}
			continue
		}
		ch.add(p, "step: "+changed[k-1]+" to B's value", []string{changed[k-1]})
	}
	if len(changed) == 0 {
		ch.add(c.B, "B (a register twin of A)", []string{})
	} else {
		ch.add(c.B, "B (step: "+changed[len(changed)-1]+" to B's value)", []string{changed[len(changed)-1]})
	}
	if len(changed) == 2 {
		if err := ch.corner(pb, knobs[0], changed, "A's", "B's"); err != nil {
			return nil, err
		}
	}
	return ch, ch.probe(c, ends)
}

// chainOnA is the chain A, then B's fields one more at a time on A's
// settings, the last B's register twin on A's settings, then B, probed
// and checked.
func chainOnA(c ChainConfig, pa, pb *profile.Profile, ends []*profile.Verification, changed []string, m *profile.Machine) (*Chain, error) {
	knobs, err := knobsFor(changed, pb, ends[1], m)
	if err != nil {
		return nil, err
	}
	ch := &Chain{Changed: changed}
	ch.add(c.A, "A", nil)
	for k := range changed {
		p, err := withKnobs(pa, slices.Concat(knobs[:k+1]...))
		if err != nil {
			return nil, err
		}
		role := "step: " + changed[k] + " to B's value"
		if k == len(changed)-1 {
			role += "; register twin of B, on A's settings"
		}
		ch.add(p, role, []string{changed[k]})
	}
	if ch.Sides[len(ch.Sides)-1] != pb.String() {
		ch.add(c.B, "B (from its register twin)", []string{})
	}
	if len(changed) == 2 {
		if err := ch.corner(pa, knobs[1], changed, "A's", "B's"); err != nil {
			return nil, err
		}
		// The corners: A, the first at B's, the second at B's, both.
		ch.Explain.Corners = []int{0, 1, ch.Explain.Corners[2], 2}
	}
	return ch, ch.probe(c, ends)
}

// knobsFor are the knobs that set each changed field as the profile p
// leaves it (v).
func knobsFor(changed []string, p *profile.Profile, v *profile.Verification, m *profile.Machine) ([][]profile.Setting, error) {
	knobs := make([][]profile.Setting, len(changed))
	for i, f := range changed {
		var err error
		if knobs[i], err = knobFor(f, p, v, m); err != nil {
			return nil, err
		}
	}
	return knobs, nil
}

// corner adds the fourth corner of the 2x2 design: base with knob, the
// first changed field at a's value and the second at b's; its corners
// are the chain's last three sides around it.
func (ch *Chain) corner(base *profile.Profile, knob []profile.Setting, changed []string, a, b string) error {
	e, err := withKnobs(base, knob)
	if err != nil {
		return err
	}
	ch.Sides = append(ch.Sides, e)
	ch.Roles = append(ch.Roles, fmt.Sprintf("corner: %s at %s value, %s at %s (for the interaction)", changed[0], a, changed[1], b))
	n := len(ch.Explain.Chain)
	ch.Explain.Corners = []int{ch.Explain.Chain[n-3], ch.Explain.Chain[n-2], len(ch.Sides) - 1, ch.Explain.Chain[n-1]}
	return nil
}

// add appends a side to the chain, reached from the previous one by
// changing fields (nil for the first side).
func (ch *Chain) add(p, role string, fields []string) {
	ch.Sides = append(ch.Sides, p)
	ch.Roles = append(ch.Roles, role)
	ch.Explain.Chain = append(ch.Explain.Chain, len(ch.Sides)-1)
	if fields != nil {
		ch.Explain.Fields = append(ch.Explain.Fields, fields)
	}
}

// probe reads what the new sides leave and checks every step: it changes
// exactly its fields.
func (ch *Chain) probe(c ChainConfig, ends []*profile.Verification) error {
	if len(ch.Sides) > MaxSides {
		return fmt.Errorf("%w: %d sides, more than %d", ErrNoChain, len(ch.Sides), MaxSides)
	}
	mid := ch.Sides[1 : len(ch.Explain.Chain)-1]
	extra := ch.Sides[len(ch.Explain.Chain):]
	vs, err := Probe(c.Root, c.FS, c.JournalDir, slices.Concat(mid, extra))
	if err != nil {
		return err
	}
	ch.Regs = slices.Concat(ends[:1], vs[:len(mid)], ends[1:], vs[len(mid):])
	check := func(from, to int, want []string) error {
		if v := ch.Regs[to]; v.Refused != "" {
			return fmt.Errorf("%w: %s is refused here: %s", ErrNoChain, v.Profile, v.Refused)
		}
		got, _ := profile.ChangedFields(ch.Regs[from], ch.Regs[to])
		if !slices.Equal(got, want) {
			return fmt.Errorf("%w: from %s to %s changes %s, not %s alone", ErrNoChain, ch.Sides[from], ch.Sides[to],
				orNothing(got), orNothing(want))
		}
		return nil
	}
	e := ch.Explain
	for k, f := range e.Fields {
		if err := check(e.Chain[k], e.Chain[k+1], f); err != nil {
			return err
		}
	}
	if len(e.Corners) == 4 {
		if err := check(e.Corners[0], e.Corners[2], ch.Changed[1:]); err != nil {
			return err
		}
	}
	return nil
}

func orNothing(fs []string) string {
	if len(fs) == 0 {
		return "nothing"
	}
	return strings.Join(fs, " and ")
}

// knobFor returns the settings that make field f hold what A left (va)
// through the kernel's own knobs.
func knobFor(f string, pa *profile.Profile, va *profile.Verification, m *profile.Machine) ([]profile.Setting, error) {
	switch f {
	case "epp", "epb":
		v, ok := profile.FieldValue(va, f)
		if !ok {
			return nil, fmt.Errorf("%w: A leaves different %s values on different CPUs", ErrNoChain, f)
		}
		if f == "epb" {
			return []profile.Setting{{Key: profile.EPB, Value: strconv.Itoa(v)}}, nil
		}
		if m.Driver == "intel_pstate" {
			return []profile.Setting{{Key: profile.EPP, Value: strconv.Itoa(v)}}, nil
		}
		for _, name := range profile.EPPNames[1:] {
			if x, ok := m.EPPTable.Value(name); ok && int(x) == v {
				return []profile.Setting{{Key: profile.EPP, Value: name}}, nil
			}
		}
		return nil, fmt.Errorf("%w: no EPP string of %s gives A's EPP %d", ErrNoChain, m.Driver, v)
	case "min":
		if own := settingsOf(pa, profile.MinPerfPct, profile.ScalingMinFreq); len(own) > 0 {
			return own, nil
		}
		if _, ok := m.State.Globals[profile.MinPerfPct]; ok && profile.FieldsEqual(va, "min", "max") {
			return []profile.Setting{{Key: profile.MinPerfPct, Value: "100"}}, nil
		}
	case "max":
		if own := settingsOf(pa, profile.NoTurbo, profile.Boost, profile.MaxPerfPct, profile.ScalingMaxFreq); len(own) > 0 {
			return own, nil
		}
	}
	return nil, fmt.Errorf("%w: no kernel knob found that sets %s as A leaves it", ErrNoChain, f)
}

// settingsOf are p's settings of the keys.
func settingsOf(p *profile.Profile, keys ...profile.Key) []profile.Setting {
	var out []profile.Setting
	for _, s := range p.Settings {
		if slices.Contains(keys, s.Key) {
			out = append(out, s)
		}
	}
	return out
}

// withKnobs is b's settings with knobs in place of b's settings of the
// same keys, as a canonical profile.
func withKnobs(b *profile.Profile, knobs []profile.Setting) (string, error) {
	var parts []string
	for _, s := range b.Settings {
		if !slices.ContainsFunc(knobs, func(k profile.Setting) bool { return k.Key == s.Key }) {
			parts = append(parts, s.String())
		}
	}
	for _, k := range knobs {
		parts = append(parts, k.String())
	}
	p, err := profile.Parse(strings.Join(parts, ","))
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNoChain, err)
	}
	return p.String(), nil
}
