// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hwpprobe/hwpprobe/internal/cli"
	"github.com/hwpprobe/hwpprobe/internal/complete"
	"github.com/hwpprobe/hwpprobe/regs"
)

func init() { subcommands = append(subcommands, newDecodeCmd) }

// decodeFlags are the options of `hwpprobe decode`.
type decodeFlags struct {
	json bool
	cpu  string
	list bool
}

func newDecodeCmd() *cobra.Command {
	var f decodeFlags
	cmd := &cobra.Command{
		Use:   "decode [--json] [--cpu FAMILY:MODEL] REG=VALUE...",
		Short: "Decode raw register values pasted from rdmsr, turbostat or a bug report",
		Long: `decode prints the fields of raw MSR values in turbostat / x86_energy_perf_policy
wording. REG is a register name in any common spelling (HWP_REQUEST,
IA32_HWP_REQUEST, MSR_HWP_REQUEST, MSR_PKG_POWER_LIMIT, ...; case-insensitive)
or a hex address (0x774). VALUE is hexadecimal, with or without 0x (rdmsr
prints it without), or decimal with the prefix dec: (dec:31).

Registers given in the same call are context for the others: the RAPL units
(MSR_RAPL_POWER_UNIT) for power limits and energy counters, TjMax
(MSR_TEMPERATURE_TARGET) for thermal status, the group core counts
(MSR_TURBO_RATIO_LIMIT1) for MSR_TURBO_RATIO_LIMIT. Without them the decode
uses a documented default and says so. --cpu selects model-specific bit tables
(the *_PERF_LIMIT_REASONS of Haswell) and units. No register is read or
written.`,
		Example: `  hwpprobe decode IA32_HWP_REQUEST=0x80002e17
  hwpprobe decode MSR_RAPL_POWER_UNIT=0xa0e03 MSR_PKG_POWER_LIMIT=0x42820800218208
  hwpprobe decode --json 0xc00102b0=e295290f
  hwpprobe decode --cpu 6:69 0x690=0x14000400
  hwpprobe decode --list`,
		ValidArgsFunction: complete.Words(regs.Names, "=", false),
		Args: cli.ArgsUsage(func(_ *cobra.Command, args []string) error {
			if !f.list && len(args) == 0 {
				return fmt.Errorf("decode needs at least one REG=VALUE argument (or --list)")
			}
			if f.list && len(args) > 0 {
				return fmt.Errorf("--list takes no arguments")
			}
			return nil
		}),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.list {
				return listRegisters(cmd.OutOrStdout())
			}
			ds, err := decodeArgs(args, f.cpu)
			if err != nil {
				return err
			}
			if f.json {
				return writeDecodedJSON(cmd.OutOrStdout(), ds)
			}
			return writeDecodedText(cmd.OutOrStdout(), ds)
		},
	}
	cmd.Flags().BoolVar(&f.json, "json", false, "print a JSON array, one element per argument")
	cmd.Flags().StringVar(&f.cpu, "cpu", "", "CPU `FAMILY:MODEL` for model-specific decodes, decimal or 0x-hex (e.g. 6:69 or 6:0x45)")
	cmd.Flags().BoolVar(&f.list, "list", false, "list the registers decode knows, with their aliases")
	return cmd
}

// decodeArgs parses every REG=VALUE argument first, so that bad input
// prints nothing but the error, then decodes each with all the others as
// context.
func decodeArgs(args []string, cpu string) ([]regs.Decoded, error) {
	type arg struct {
		r *regs.Register
		v uint64
	}
	parsed := make([]arg, 0, len(args))
	ctx := regs.Context{}
	for _, a := range args {
		r, v, err := regs.ParseAssignment(a)
		if err != nil {
			return nil, cli.Usagef("decode %s: %w", a, err)
		}
		if old, dup := ctx[r.Address]; dup && old != v && usedAsContext(r.Address) {
			return nil, cli.Usagef("decode: %s given twice (0x%x and 0x%x): its value is context for other registers, give it once", r.Name, old, v)
		}
		ctx[r.Address] = v
		parsed = append(parsed, arg{r, v})
	}
	if cpu != "" {
		sig, err := parseCPU(cpu)
		if err != nil {
			return nil, cli.Usagef("decode --cpu %s: %w", cpu, err)
		}
		ctx[regs.CPUSignature] = sig
	}
	out := make([]regs.Decoded, len(parsed))
	for i, p := range parsed {
		out[i] = p.r.Decode(p.v, ctx)
	}
	return out, nil
}

// usedAsContext reports whether any register's decode reads addr from the
// context.
func usedAsContext(addr uint32) bool {
	for _, r := range regs.All() {
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
	return regs.Signature(n[0], n[1]), nil
}

func writeDecodedJSON(w io.Writer, ds []regs.Decoded) error {
	b, err := json.MarshalIndent(ds, "", "  ")
	if err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// writeDecodedText prints one block per register: the turbostat-style
// line, each field, and the assumptions made.
func writeDecodedText(w io.Writer, ds []regs.Decoded) error {
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

func listRegisters(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ADDRESS\tNAME\tVENDOR\tSCOPE\tALSO\tDESCRIPTION")
	for _, r := range regs.All() {
		fmt.Fprintf(tw, "0x%x\t%s\t%s\t%s\t%s\t%s\n", r.Address, r.Name, r.Vendor, r.Scope, strings.Join(r.Aliases, ","), r.Doc)
	}
	return tw.Flush()
}
