// SPDX-License-Identifier: Apache-2.0

// Command bpfcompare checks that two eBPF objects compiled from the same C
// source by different compilers agree in everything the loader relies on,
// where their bytes cannot (scripts/bpfgen.sh check, with a clang other
// than the one recorded in ebpf/msrtrace.gen; docs/testing.md): each
// program's name, type, attach type and target, section and licence; each
// map's name, type, key and value size, entries and flags; and the BTF
// layout (size, members, offsets) of the types named on the command line.
// It prints the differences and exits 1 when there are any, 2 on bad
// input.
//
// Usage: bpfcompare COMMITTED.o FRESH.o [TYPE...]
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/google/go-cmp/cmp"
)

// program is what the loader takes from a program of the object.
type program struct {
	Type       ebpf.ProgramType
	AttachType ebpf.AttachType
	AttachTo   string
	Section    string
	License    string
}

// mapDef is what the loader takes from a map of the object.
type mapDef struct {
	Type       ebpf.MapType
	KeySize    uint32
	ValueSize  uint32
	MaxEntries uint32
	Flags      uint32
}

// member is one field of a BTF struct or union.
type member struct {
	Name     string
	Offset   btf.Bits
	Bits     btf.Bits
	TypeName string
	Size     uint32
}

// layout is the part of an object the comparison looks at.
type layout struct {
	Programs map[string]program
	Maps     map[string]mapDef
	Types    map[string][]member
	Sizes    map[string]uint32
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: bpfcompare COMMITTED.o FRESH.o [TYPE...]")
		os.Exit(2)
	}
	types := os.Args[3:]
	want, err := read(os.Args[1], types)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bpfcompare:", err)
		os.Exit(2)
	}
	got, err := read(os.Args[2], types)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bpfcompare:", err)
		os.Exit(2)
	}
	if d := cmp.Diff(want, got); d != "" {
		fmt.Printf("bpfcompare: %s and %s differ in what the loader relies on (-committed +fresh):\n%s", os.Args[1], os.Args[2], d)
		os.Exit(1)
	}
	fmt.Printf("bpfcompare: %s and %s agree: %d programs, %d maps, %d BTF types\n", os.Args[1], os.Args[2], len(want.Programs), len(want.Maps), len(types))
}

// read loads the object at path and takes its layout.
func read(path string, types []string) (*layout, error) {
	spec, err := ebpf.LoadCollectionSpec(path)
	if err != nil {
		return nil, err
	}
	l := &layout{Programs: map[string]program{}, Maps: map[string]mapDef{}, Types: map[string][]member{}, Sizes: map[string]uint32{}}
	for name, p := range spec.Programs {
		l.Programs[name] = program{Type: p.Type, AttachType: p.AttachType, AttachTo: p.AttachTo, Section: p.SectionName, License: p.License}
	}
	for name, m := range spec.Maps {
		l.Maps[name] = mapDef{Type: m.Type, KeySize: m.KeySize, ValueSize: m.ValueSize, MaxEntries: m.MaxEntries, Flags: m.Flags}
	}
	if len(types) > 0 && spec.Types == nil {
		return nil, fmt.Errorf("%s: no BTF", path)
	}
	for _, name := range types {
		t, err := spec.Types.AnyTypeByName(name)
		if err != nil {
			return nil, fmt.Errorf("%s: BTF type %s: %w", path, name, err)
		}
		size, err := btf.Sizeof(t)
		if err != nil {
			return nil, fmt.Errorf("%s: BTF type %s: %w", path, name, err)
		}
		l.Sizes[name] = uint32(size)
		var members []btf.Member
		switch c := t.(type) {
		case *btf.Struct:
			members = c.Members
		case *btf.Union:
			members = c.Members
		default:
			return nil, fmt.Errorf("%s: BTF type %s is a %T, not a struct or union", path, name, t)
		}
		for _, m := range members {
			msize, err := btf.Sizeof(m.Type)
			if err != nil && !errors.Is(err, btf.ErrNotSupported) {
				return nil, fmt.Errorf("%s: %s.%s: %w", path, name, m.Name, err)
			}
			l.Types[name] = append(l.Types[name], member{Name: m.Name, Offset: m.Offset, Bits: m.BitfieldSize, TypeName: m.Type.TypeName(), Size: uint32(msize)})
		}
	}
	return l, nil
}
