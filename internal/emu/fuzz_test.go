// SPDX-License-Identifier: Apache-2.0

package emu

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/emu/vfs"
)

// FuzzParseDescription: any input gives a machine or one DescriptionError
// on one line, never a panic; a description that parses builds a machine
// whose every file and device answers without a panic.
func FuzzParseDescription(f *testing.F) {
	for _, name := range []string{"mtl-165u", "zen4-amd-pstate"} { // spr-2s and vm-bare are large: slow to mutate
		b, err := builtin.ReadFile("machines/" + name + ".yaml")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(tiny))
	f.Add([]byte(tiny + "files:\n  - {path: proc/cpuinfo, mode: \"0444\", content: \"x\\n\"}\n  - {path: sys/class/powercap, dir: true}\n" +
		"cpuid:\n  - {leaf: 1, cpus: 0-1, regs: [1, 2, 3, 4]}\n  - {leaf: 4, subleaf: 1, cpus: 1, regs: [1, 2, 3, 4]}\n"))
	for _, tc := range descFaults {
		f.Add([]byte(tc.data))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseDescription(data)
		if err != nil {
			var de *DescriptionError
			if !errors.As(err, &de) || !errors.Is(err, ErrDescription) || strings.Contains(err.Error(), "\n") || de.Line < 1 {
				t.Fatalf("error %q (%T): want one DescriptionError line", err, err)
			}
			return
		}
		if err := sane(d); err != nil {
			t.Fatalf("accepted: %v", err)
		}
		if d.NumCPUs() > 32 {
			return // valid, but building and reading every file is quadratic in CPUs: too slow to fuzz
		}
		clk := time.Unix(1_800_000_000, 0)
		m, err := New(d, WithLoad(ConstLoad{0.5}), WithClock(func() time.Time { clk = clk.Add(time.Second); return clk }))
		if err != nil {
			return // e.g. amd-pstate without CPPC registers
		}
		walk(t, m.Tree(), 0)
	})
}

// sane returns what an accepted description must not hold: a name that
// is not printable text, a power or thermal figure that is not finite, a
// NUL in a file's path or link.
func sane(d *Description) error {
	if cli.OneLine(d.Name) != d.Name {
		return fmt.Errorf("name %q", d.Name)
	}
	p := d.Power
	figs := []float64{p.IdleW, p.UncoreW, p.Exponent, p.DRAMW, p.DRAMBusyW, p.PlatformW}
	for _, ct := range d.CoreTypes {
		figs = append(figs, ct.ActiveW, ct.ThermOffsetC)
	}
	if th := d.Thermal; th != nil {
		figs = append(figs, th.AmbientC, th.RKPerW, th.CJPerK)
	}
	for _, v := range figs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("figure %v", v)
		}
	}
	for _, e := range d.Files {
		if strings.ContainsRune(e.Path+e.Link, 0) {
			return fmt.Errorf("file %q link %q: NUL", e.Path, e.Link)
		}
	}
	return nil
}

// walk reads every file and a few device offsets below d, of CPUs 0 and 1
// only (the others are built alike; reading them all makes an execution
// take a second).
func walk(t *testing.T, d *vfs.Dir, depth int) {
	if depth > 64 {
		t.Fatal("tree deeper than 64")
	}
	for _, name := range d.Names() {
		if n, err := strconv.Atoi(strings.TrimPrefix(strings.TrimPrefix(name, "cpu"), "policy")); err == nil && n > 1 {
			continue
		}
		n, _ := d.Lookup(name)
		switch n := n.(type) {
		case *vfs.Dir:
			walk(t, n, depth+1)
		case *vfs.File:
			_, _ = n.Read()
		case *vfs.Device:
			for _, off := range []int64{0, 1, 4, 6, 0x10, 0x1A, 0xE7, 0x606, 0x611, 0x774, 0x80000002, 1<<32 | 4} {
				_, _ = n.ReadAt(make([]byte, 16), off)
			}
		}
	}
}
