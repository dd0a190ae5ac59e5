// SPDX-License-Identifier: Apache-2.0

package cpuidshim

import (
	"debug/elf"
	"errors"
	"fmt"
	"slices"

	"golang.org/x/arch/x86/x86asm"
)

// ErrNotELF64 is returned by Sites for a file that is not a 64-bit x86 ELF
// program.
var ErrNotELF64 = errors.New("not a 64-bit x86 ELF file")

// Site is one CPUID instruction (0F A2) of a program.
type Site struct {
	// Addr is the instruction's virtual address as linked; the library
	// adds the load bias of a position-independent program.
	Addr uint64
	// Offset is its offset in the file.
	Offset uint64
}

// Sites disassembles the executable sections of the ELF program at path
// and returns its CPUID instructions in address order. Decoding restarts
// at the start of each section and at each symbol in it, as objdump -d
// does, so padding or data between functions cannot shift the decoding
// of the next function; an undecodable byte is stepped over on its own.
func Sites(path string) ([]Site, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cpuidshim: %w", err)
	}
	defer f.Close()
	if f.Class != elf.ELFCLASS64 || f.Machine != elf.EM_X86_64 {
		return nil, fmt.Errorf("cpuidshim: %s: %w", path, ErrNotELF64)
	}
	starts := symbolStarts(f)
	var sites []Site
	for _, s := range f.Sections {
		if s.Type != elf.SHT_PROGBITS || s.Flags&elf.SHF_EXECINSTR == 0 {
			continue
		}
		code, err := s.Data()
		if err != nil {
			return nil, fmt.Errorf("cpuidshim: %s section %s: %w", path, s.Name, err)
		}
		for _, a := range sectionSites(s.Addr, code, starts) {
			sites = append(sites, Site{Addr: a, Offset: a - s.Addr + s.Offset})
		}
	}
	return sites, nil
}

// symbolStarts returns the sorted addresses of the file's code and data
// symbols, static and dynamic (a stripped program has only the latter).
func symbolStarts(f *elf.File) []uint64 {
	var addrs []uint64
	for _, read := range []func() ([]elf.Symbol, error){f.Symbols, f.DynamicSymbols} {
		syms, _ := read() // a stripped file has no symbol table: no restarts
		for _, s := range syms {
			switch elf.ST_TYPE(s.Info) {
			case elf.STT_SECTION, elf.STT_FILE, elf.STT_TLS:
				continue
			}
			if s.Section != elf.SHN_UNDEF && s.Value != 0 {
				addrs = append(addrs, s.Value)
			}
		}
	}
	slices.Sort(addrs)
	return slices.Compact(addrs)
}

// sectionSites decodes code, linked at base, from its start and from each
// of starts inside it, each run up to the next start, and returns the
// addresses of the CPUID instructions.
func sectionSites(base uint64, code []byte, starts []uint64) []uint64 {
	end := base + uint64(len(code))
	bounds := []uint64{base}
	for _, a := range starts {
		if a > base && a < end {
			bounds = append(bounds, a)
		}
	}
	bounds = append(bounds, end)
	var sites []uint64
	for i := 0; i+1 < len(bounds); i++ {
		for pc := bounds[i]; pc < bounds[i+1]; {
			inst, err := x86asm.Decode(code[pc-base:], 64)
			if err != nil {
				pc++
				continue
			}
			if inst.Op == x86asm.CPUID {
				sites = append(sites, pc)
			}
			pc += uint64(inst.Len)
		}
	}
	return sites
}
