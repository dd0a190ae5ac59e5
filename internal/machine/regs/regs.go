// SPDX-License-Identifier: Apache-2.0

// Package regs is the catalog of the power-management registers hwpprobe
// reads: it maps names, aliases and addresses to a Register that decodes a
// raw value into named fields, in the wording of turbostat and
// x86_energy_perf_policy. The field decoders live in packages hwp and rapl;
// this package names the fields and supplies the context one register's
// decode needs from another (RAPL units, TjMax, turbo group core counts,
// the CPU model).
//
// The catalog is read-only: callers must not modify the Registers it
// returns.
package regs

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
)

// ErrUnknown is wrapped by Lookup's error for a name or address that is not
// in the catalog.
var ErrUnknown = errors.New("unknown register")

// Context holds the raw values of other registers, by address, that a
// decode may use: MSR_RAPL_POWER_UNIT for power and energy registers,
// MSR_TEMPERATURE_TARGET for thermal status, MSR_TURBO_RATIO_LIMIT1 for
// turbo groups, and the pseudo-register CPUSignature for model-specific
// layouts. A nil Context is valid.
type Context map[uint32]uint64

// CPUSignature is a Context key that is not an MSR: its value is CPUID
// leaf 1 EAX (family, model, stepping), which selects model-specific bit
// meanings such as those of MSR_CORE_PERF_LIMIT_REASONS.
const CPUSignature uint32 = 0xFFFFFFFF

// Signature returns the CPUID leaf 1 EAX value for a display family and
// model (as turbostat prints them, e.g. 6 and 0x8e), stepping 0.
func Signature(family, model uint32) uint64 {
	var eax uint32
	if family > 0xf {
		eax |= 0xf<<8 | (family-0xf)<<20
	} else {
		eax |= family << 8
	}
	eax |= (model&0xf)<<4 | (model>>4)<<16
	return uint64(eax)
}

// FamilyModel returns the display family and model of a CPUID leaf 1 EAX
// value (Intel SDM vol. 2A, CPUID "Family and Model").
func FamilyModel(sig uint64) (family, model uint32) {
	eax := uint32(sig)
	family = eax >> 8 & 0xf
	model = eax >> 4 & 0xf
	if family == 0xf {
		family += eax >> 20 & 0xff
	}
	if family == 0x6 || family >= 0xf {
		model |= (eax >> 16 & 0xf) << 4
	}
	return family, model
}

// Vendor is the CPU vendor whose documentation defines a register.
type Vendor uint8

// Vendors.
const (
	Intel Vendor = iota
	AMD
)

// String returns "Intel" or "AMD".
func (v Vendor) String() string {
	if v == AMD {
		return "AMD"
	}
	return "Intel"
}

// Scope says which CPUs share one instance of a register.
type Scope uint8

// Scopes.
const (
	Thread  Scope = iota // one per logical CPU
	Core                 // shared by the threads of a core
	Package              // shared by the package (socket)
)

// String returns "thread", "core" or "package".
func (s Scope) String() string {
	switch s {
	case Core:
		return "core"
	case Package:
		return "package"
	}
	return "thread"
}

// Register is one entry of the catalog.
type Register struct {
	Name    string   // SDM / kernel msr-index.h name, e.g. "IA32_HWP_REQUEST"
	Address uint32   // MSR number
	Aliases []string // other accepted names (turbostat, x86_energy_perf_policy spellings)
	Vendor  Vendor
	Scope   Scope
	Doc     string   // one-line description
	Uses    []uint32 // addresses of registers the decode takes from the Context
	// Role says what the register is for; ByRole, Requests and EPB find
	// registers by it, so that callers need not name addresses.
	Role Role
	// Sampled registers are read on every sampled CPU (Thread and Core
	// scope) or package (Package scope) each interval, and their raw
	// values recorded (package source, recording.Reg).
	Sampled bool
	// Fields are the register's bit fields: every register of the
	// catalog lists them (catalog.go), in bits 63:0 without overlap. A
	// register without a decoder of its own (all those added outside the
	// catalog) is decoded from them.
	Fields []FieldSpec
	decode func(d *Decoded, ctx Context)
	// request decodes a request register (RoleRequest and
	// RolePackageRequest) into the vendor-neutral view.
	request func(raw uint64) Request
}

// FieldSpec is one bit field of a register.
type FieldSpec struct {
	Name    string   // snake_case: the Decoded.Fields name where the decoder shows the raw bits
	Hi, Lo  uint8    // bit range Hi:Lo, inclusive
	SDM     string   // the field's name in the Intel SDM or AMD PPR
	Aliases []string // the kernel tools' names (turbostat, x86_energy_perf_policy)
}

// Extract returns the field's bits of raw.
func (f FieldSpec) Extract(raw uint64) uint64 {
	w := uint(f.Hi-f.Lo) + 1
	if w >= 64 {
		return raw >> f.Lo
	}
	return raw >> f.Lo & (1<<w - 1)
}

// Role says what a register is for.
type Role uint8

// Roles.
const (
	RoleOther          Role = iota
	RoleCounter             // free-running clock counts (APERF, MPERF)
	RoleCapabilities        // the performance range and ratios the hardware offers
	RoleEnable              // feature enables (HWP, CPPC, IA32_MISC_ENABLE)
	RoleControl             // the legacy P-state request (IA32_PERF_CTL)
	RoleRequest             // a CPU's performance request: min, max, desired, EPP
	RolePackageRequest      // the package-wide performance request
	RoleBias                // the energy/performance bias hint (EPB)
	RoleStatus              // performance status and feedback
	RoleThermal             // temperatures and thermal targets
	RoleUnits               // RAPL units
	RoleEnergy              // energy counters
	RoleLimit               // power limits
	RoleLimitReasons        // why the hardware runs below the request
	RoleInterrupt           // notification enables
)

var roleNames = [...]string{"other", "counter", "capabilities", "enable", "control", "request",
	"package-request", "bias", "status", "thermal", "units", "energy", "limit", "limit-reasons", "interrupt"}

// String returns the role's name, e.g. "request".
func (r Role) String() string {
	if int(r) < len(roleNames) {
		return roleNames[r]
	}
	return fmt.Sprintf("role(%d)", r)
}

// Field is one decoded field. Value is a uint64 (register fields, counts),
// int (temperatures in °C), float64 (watts, joules, seconds), bool (flags)
// or string (names).
type Field struct {
	Name  string // snake_case, as in `hwpprobe decode --json`
	Value any
}

// Decoded is the decode of one raw register value.
type Decoded struct {
	Register    string // Register.Name
	Address     uint32
	Raw         uint64
	Fields      []Field  // in register order
	Assumptions []string // defaults used for missing context, and caveats
	// Summary is the parenthesised decode in turbostat or
	// x86_energy_perf_policy wording, e.g. "min 23 max 46 des 0 epp 0x80
	// window 0x0 pkg 0x0".
	Summary string
}

// Field returns the value of the named field.
func (d Decoded) Field(name string) (any, bool) {
	for _, f := range d.Fields {
		if f.Name == name {
			return f.Value, true
		}
	}
	return nil, false
}

// Text returns the decode on one line, as turbostat prints it:
// "IA32_HWP_REQUEST: 0x80002e17 (min 23 max 46 des 0 epp 0x80 window 0x0 pkg 0x0)".
func (d Decoded) Text() string {
	s := fmt.Sprintf("%s: 0x%08x", d.Register, d.Raw)
	if d.Summary != "" {
		s += " (" + d.Summary + ")"
	}
	return s
}

// MarshalJSON writes {"register","address","raw","fields":{...},
// "assumptions":[...],"text"}: address and raw as hex strings, fields as
// an object in register order.
func (d Decoded) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteString(`{"register":`)
	writeJSON(&b, d.Register)
	b.WriteString(`,"address":`)
	writeJSON(&b, fmt.Sprintf("0x%x", d.Address))
	b.WriteString(`,"raw":`)
	writeJSON(&b, fmt.Sprintf("0x%x", d.Raw))
	b.WriteString(`,"fields":{`)
	for i, f := range d.Fields {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSON(&b, f.Name)
		b.WriteByte(':')
		if err := writeJSON(&b, f.Value); err != nil {
			return nil, fmt.Errorf("field %s of %s: %w", f.Name, d.Register, err)
		}
	}
	b.WriteString(`},"assumptions":`)
	a := d.Assumptions
	if a == nil {
		a = []string{}
	}
	writeJSON(&b, a)
	b.WriteString(`,"text":`)
	writeJSON(&b, d.Text())
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// JSONSchema is MarshalJSON's form as a JSON Schema (internal/schema):
// every member present, the fields' values as the decoders give them
// (numbers, strings, booleans).
func (Decoded) JSONSchema() map[string]any {
	hex := map[string]any{"type": "string", "pattern": "^0x[0-9a-f]+$"}
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"register":    map[string]any{"type": "string"},
			"address":     hex,
			"raw":         hex,
			"fields":      map[string]any{"type": "object", "additionalProperties": map[string]any{"type": []any{"number", "string", "boolean"}}},
			"assumptions": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			"text":        map[string]any{"type": "string"},
		},
		"required":             []any{"register", "address", "raw", "fields", "assumptions", "text"},
		"additionalProperties": false,
	}
}

func writeJSON(b *strings.Builder, v any) error {
	j, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b.Write(j)
	return nil
}

// Decode decodes raw, taking other registers' values from ctx (which may
// be nil). It never fails: missing context is replaced by a documented
// default that is listed in Assumptions.
func (r *Register) Decode(raw uint64, ctx Context) Decoded {
	d := Decoded{Register: r.Name, Address: r.Address, Raw: raw, Fields: make([]Field, 0, 16)}
	if r.decode != nil {
		r.decode(&d, ctx)
		return d
	}
	parts := make([]string, len(r.Fields))
	for i, f := range r.Fields {
		v := f.Extract(raw)
		d.add(f.Name, v)
		parts[i] = fmt.Sprintf("%s %d", f.Name, v)
	}
	d.Summary = strings.Join(parts, " ")
	return d
}

// add appends a field.
func (d *Decoded) add(name string, v any) { d.Fields = append(d.Fields, Field{name, v}) }

// assume appends an assumption.
func (d *Decoded) assume(format string, a ...any) {
	d.Assumptions = append(d.Assumptions, fmt.Sprintf(format, a...))
}

// All returns the catalog in address order.
func All() []*Register { return append([]*Register(nil), catalog.Load().list...) }

// ByRole returns the registers of a role, in address order (the
// catalog's own list: read-only, as every Register is).
func ByRole(role Role) []*Register { return catalog.Load().byRole[role] }

// Requests returns the per-CPU request registers (RoleRequest) in address
// order: Intel's IA32_HWP_REQUEST before AMD's CPPC request.
func Requests() []*Register { return ByRole(RoleRequest) }

// RequestOf returns vendor v's per-CPU request register.
func RequestOf(v Vendor) *Register {
	for _, r := range Requests() {
		if r.Vendor == v {
			return r
		}
	}
	panic(fmt.Sprintf("regs: no request register for %s", v))
}

// EPB returns IA32_ENERGY_PERF_BIAS, the one register of RoleBias.
func EPB() *Register { return ByRole(RoleBias)[0] }

// SettingAddresses returns the addresses of the per-CPU registers that
// the cpufreq and EPB drivers write when a setting changes: Intel's
// request, EPB, AMD's request, in this order (the order in which
// recordings list them, and the tracer's filter holds them).
func SettingAddresses() []uint32 {
	return []uint32{RequestOf(Intel).Address, EPB().Address, RequestOf(AMD).Address}
}

// Sampled returns the registers the sampler reads every interval
// (Register.Sampled), in address order (read-only, as ByRole's).
func Sampled() []*Register { return catalog.Load().sampled }

// Extend adds registers to the catalog until the returned function
// restores it. It is for tests that show a register needs nothing but its
// catalog entry; it panics on a duplicate address or name.
func Extend(rs ...*Register) (restore func()) {
	old := catalog.Load()
	list := append(slices.Clone(old.list), rs...)
	slices.SortFunc(list, func(a, b *Register) int { return cmp.Compare(a.Address, b.Address) })
	ix := buildIndex(list)
	catalog.Store(&ix)
	return func() { catalog.Store(old) }
}

// Names returns every register's name and then its aliases, in address
// order: what Lookup accepts by name (shell completion offers them).
func Names() []string {
	var names []string
	for _, r := range catalog.Load().list {
		names = append(names, r.Name)
		names = append(names, r.Aliases...)
	}
	return names
}

// ByAddress returns the register at an MSR address.
func ByAddress(addr uint32) (*Register, bool) {
	r, ok := catalog.Load().byAddr[addr]
	return r, ok
}

// Lookup finds a register by name or alias (case-insensitive; any of the
// spellings IA32_X, MSR_IA32_X, MSR_X and X) or by hex address ("0x774").
// An unknown name or address gives an error wrapping ErrUnknown.
func Lookup(s string) (*Register, error) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "0x") || strings.HasPrefix(t, "0X") {
		a, err := strconv.ParseUint(t[2:], 16, 32)
		if err != nil {
			return nil, fmt.Errorf("register address %q: %w", s, ErrUnknown)
		}
		if r, ok := ByAddress(uint32(a)); ok {
			return r, nil
		}
		return nil, fmt.Errorf("register address %#x: %w", a, ErrUnknown)
	}
	if r, ok := catalog.Load().byName[strings.ToUpper(t)]; ok {
		return r, nil
	}
	return nil, fmt.Errorf("register %q: %w", s, ErrUnknown)
}

// index is the catalog with its lookups built once: the sampler and the
// readers ask by role on every sample or row, so none of them scans the
// list or allocates.
type index struct {
	list    []*Register
	byAddr  map[uint32]*Register
	byName  map[string]*Register
	byRole  map[Role][]*Register // capacity clipped: an append copies
	sampled []*Register
}

// catalog is built once from registers(); only Extend replaces it.
var catalog atomic.Pointer[index]

func init() {
	ix := buildIndex(registers())
	catalog.Store(&ix)
}

func buildIndex(list []*Register) index {
	ix := index{list: list, byAddr: map[uint32]*Register{}, byName: map[string]*Register{}, byRole: map[Role][]*Register{}}
	for _, r := range list {
		ix.byRole[r.Role] = append(ix.byRole[r.Role], r)
		if r.Sampled {
			ix.sampled = append(ix.sampled, r)
		}
		if _, dup := ix.byAddr[r.Address]; dup {
			panic(fmt.Sprintf("regs: duplicate address %#x", r.Address))
		}
		ix.byAddr[r.Address] = r
		for _, n := range append([]string{r.Name}, r.Aliases...) {
			for _, sp := range spellings(n) {
				if o, dup := ix.byName[sp]; dup && o != r {
					panic(fmt.Sprintf("regs: name %s for both %s and %s", sp, o.Name, r.Name))
				}
				ix.byName[sp] = r
			}
		}
	}
	for role, rs := range ix.byRole {
		ix.byRole[role] = slices.Clip(rs)
	}
	ix.sampled = slices.Clip(ix.sampled)
	return ix
}

// spellings returns the upper-case forms under which a name is found:
// the name itself and, for Intel-style names, the base name with and
// without the MSR_, IA32_ and MSR_IA32_ prefixes.
func spellings(n string) []string {
	n = strings.ToUpper(n)
	base := strings.TrimPrefix(n, "MSR_")
	base = strings.TrimPrefix(base, "IA32_")
	return []string{n, base, "MSR_" + base, "IA32_" + base, "MSR_IA32_" + base}
}
