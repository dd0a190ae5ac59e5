// SPDX-License-Identifier: Apache-2.0

package capture

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/hwpprobe/hwpprobe/hwp"
	"github.com/hwpprobe/hwpprobe/internal/emu"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpuid"
	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
	"github.com/hwpprobe/hwpprobe/internal/machine/regs"
	"github.com/hwpprobe/hwpprobe/msr"
)

// problems groups the CPUs that failed a device read the same way.
type problems struct {
	order []string
	cpus  map[string]cpus.List
}

func (p *problems) add(cpu int, err error, sentinels ...error) {
	text := err.Error()
	for _, s := range sentinels {
		if errors.Is(err, s) {
			text = s.Error()
			break
		}
	}
	if p.cpus == nil {
		p.cpus = map[string]cpus.List{}
	}
	if _, ok := p.cpus[text]; !ok {
		p.order = append(p.order, text)
	}
	p.cpus[text] = append(p.cpus[text], cpu)
}

// report lists each problem as unreadable under dev/cpu/*/<dev>.
func (p *problems) report(c *capturer, dev string) {
	for _, text := range p.order {
		c.missing = append(c.missing, emu.Unreadable{
			Path:  "dev/cpu/*/" + dev,
			Error: fmt.Sprintf("CPUs %s: %s", p.cpus[text], text),
		})
	}
}

// cpuid reads every leaf and subleaf of every selected online CPU and
// groups the CPUs that answer a leaf alike. ok is false when no CPU could
// be read.
func (c *capturer) cpuid(hypervisor bool) (entries []emu.CPUIDEntry, ok bool) {
	dev := cpuid.Open(c.root)
	defer dev.Close()
	g := grouper[cpuidGroupKey]{}
	var bad problems
	for _, n := range c.selected {
		leaves, err := readLeaves(dev, n, hypervisor)
		if err != nil {
			bad.add(n, err, cpuid.ErrNoDevice, cpuid.ErrPermission, cpuid.ErrOffline)
			continue
		}
		ok = true
		for _, l := range leaves {
			g.add(cpuidGroupKey(l), n)
		}
	}
	bad.report(c, "cpuid")
	for _, k := range g.order {
		e := emu.CPUIDEntry{Leaf: k.leaf, CPUs: g.cpus[k].String(), Regs: k.regs}
		if !k.any {
			sub := k.sub
			e.Subleaf = &sub
		}
		entries = append(entries, e)
	}
	sort.SliceStable(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		if a.Leaf != b.Leaf {
			return a.Leaf < b.Leaf
		}
		return subOf(a) < subOf(b)
	})
	return entries, ok
}

func subOf(e emu.CPUIDEntry) int64 {
	if e.Subleaf == nil {
		return -1
	}
	return int64(*e.Subleaf)
}

type cpuidGroupKey struct {
	leaf, sub uint32
	any       bool
	regs      [4]uint32
}

// grouper collects the CPUs sharing a key, keys in first-seen order.
type grouper[K comparable] struct {
	order []K
	cpus  map[K]cpus.List
}

func (g *grouper[K]) add(k K, cpu int) {
	if g.cpus == nil {
		g.cpus = map[K]cpus.List{}
	}
	if _, ok := g.cpus[k]; !ok {
		g.order = append(g.order, k)
	}
	g.cpus[k] = append(g.cpus[k], cpu)
}

// openErrors are the msr device's failures to open, the same for every
// register.
var openErrors = []error{msr.ErrNoDriver, msr.ErrNoDevice, msr.ErrPermission, msr.ErrOffline}

// msrs reads every register of the catalog on every selected online CPU.
// A register the CPU does not implement (EIO) is left out, as the device
// answers for it; other failures are listed as unreadable. APERF and MPERF
// become counters that start at the value read. ok is false when no CPU
// could be read.
func (c *capturer) msrs() (out []emu.MSR, ok bool) {
	dev := msr.Open(c.root)
	defer dev.Close()
	type key struct {
		addr uint32
		val  uint64
	}
	g := grouper[key]{}
	var bad problems
	all := regs.All()
	slices.SortFunc(all, func(a, b *regs.Register) int { return int(int64(a.Address) - int64(b.Address)) })
	for _, n := range c.selected {
		for _, r := range all {
			v, err := dev.ReadMSR(n, r.Address)
			if errors.Is(err, msr.ErrUnsupported) {
				continue
			}
			if err != nil {
				opened := !slices.ContainsFunc(openErrors, func(e error) bool { return errors.Is(err, e) })
				bad.add(n, err, openErrors...)
				if !opened {
					break // the device itself failed: the other registers would too
				}
				continue
			}
			ok = true
			g.add(key{r.Address, v}, n)
		}
	}
	bad.report(c, "msr")
	for _, k := range g.order {
		r, _ := regs.ByAddress(k.addr)
		m := emu.MSR{Addr: k.addr, Name: r.Name, Value: k.val, CPUs: g.cpus[k].String(), Source: "captured"}
		switch k.addr {
		case hwp.MSR_IA32_APERF:
			m.Kind, m.Source = "aperf", "captured; counts from this value"
		case hwp.MSR_IA32_MPERF:
			m.Kind, m.Source = "mperf", "captured; counts from this value"
		}
		out = append(out, m)
	}
	slices.SortStableFunc(out, func(a, b emu.MSR) int { return int(int64(a.Addr) - int64(b.Addr)) })
	return out, ok
}
