// SPDX-License-Identifier: Apache-2.0

package regs

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// DecodeArgs is `hwpprobe decode`: it parses every REG=VALUE argument
// (ParseAssignment) first, so that bad input prints nothing but the
// error, then decodes each with all the others as context; cpu
// (FAMILY:MODEL, "" for none) selects the model-specific tables. Every
// error it returns is the input's.
func DecodeArgs(args []string, cpu string) ([]Decoded, error) {
	type arg struct {
		r *Register
		v uint64
	}
	parsed := make([]arg, 0, len(args))
	ctx := Context{}
	for _, a := range args {
		r, v, err := ParseAssignment(a)
		if err != nil {
			return nil, fmt.Errorf("decode %s: %w", a, err)
		}
		if old, dup := ctx[r.Address]; dup && old != v && usedAsContext(r.Address) {
			return nil, fmt.Errorf("decode: %s given twice (0x%x and 0x%x): its value is context for other registers, give it once", r.Name, old, v)
		}
		ctx[r.Address] = v
		parsed = append(parsed, arg{r, v})
	}
	if cpu != "" {
		sig, err := parseCPU(cpu)
		if err != nil {
			return nil, fmt.Errorf("decode --cpu %s: %w", cpu, err)
		}
		ctx[CPUSignature] = sig
	}
	out := make([]Decoded, len(parsed))
	for i, p := range parsed {
		out[i] = p.r.Decode(p.v, ctx)
	}
	return out, nil
}

// usedAsContext reports whether any register's decode reads addr from the
// context.
func usedAsContext(addr uint32) bool {
	for _, r := range All() {
		for _, u := range r.Uses {
			if u == addr {
				return true
			}
		}
	}
	return false
}

// parseCPU parses FAMILY:MODEL[:STEPPING] (decimal or 0x-hex numbers) into
// a CPUID leaf 1 signature.
func parseCPU(s string) (uint64, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, fmt.Errorf("want FAMILY:MODEL, e.g. 6:69 or 6:0x45")
	}
	var n [2]uint32
	for i := range n {
		v, err := strconv.ParseUint(parts[i], 0, 8)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number from 0 to 255 (decimal, or hex with 0x)", parts[i])
		}
		n[i] = uint32(v)
	}
	return Signature(n[0], n[1]), nil
}

// WriteJSON writes decodes as `hwpprobe decode --json` does: one array,
// an element per decode (schema hwpprobe-decode/1, docs/schemas.md).
func WriteJSON(w io.Writer, ds []Decoded) error {
	b, err := json.MarshalIndent(ds, "", "  ")
	if err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// WriteText writes decodes as `hwpprobe decode` prints them: one block
// per register, the turbostat-style line, each field, and the assumptions
// made.
func WriteText(w io.Writer, ds []Decoded) error {
	var b strings.Builder
	for i, d := range ds {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s\n", d.Text())
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  address\t0x%x\n", d.Address)
		for _, f := range d.Fields {
			fmt.Fprintf(tw, "  %s\t%s\n", f.Name, fieldText(f.Value))
		}
		tw.Flush()
		for _, a := range d.Assumptions {
			fmt.Fprintf(&b, "  note: %s\n", a)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fieldText formats a field value for the text output.
func fieldText(v any) string {
	switch x := v.(type) {
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	default:
		return fmt.Sprint(x)
	}
}

// WriteList writes the catalog as `hwpprobe decode --list` does: each
// register's address, name, vendor, scope, aliases and description.
func WriteList(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ADDRESS\tNAME\tVENDOR\tSCOPE\tALSO\tDESCRIPTION")
	for _, r := range All() {
		fmt.Fprintf(tw, "0x%x\t%s\t%s\t%s\t%s\t%s\n", r.Address, r.Name, r.Vendor, r.Scope, strings.Join(r.Aliases, ","), r.Doc)
	}
	return tw.Flush()
}
