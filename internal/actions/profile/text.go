// SPDX-License-Identifier: Apache-2.0

package profile

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/hwpprobe/hwpprobe/internal/kernel/cpus"
)

func listString(l []int) string { return cpus.List(l).String() }

func optInt(p *int) string {
	if p == nil {
		return "n/a"
	}
	return strconv.Itoa(*p)
}

// WriteVerification prints a verification: per core type what sysfs shows
// and the request register holds, next to what was asked, then the notes.
func WriteVerification(w io.Writer, v *Verification) {
	if v.Emulated != "" {
		fmt.Fprintf(w, "EMULATED: machine %q (hwpemu); every value below is emulated\n", v.Emulated)
	}
	fmt.Fprintf(w, "profile %s\n", v.Profile)
	if v.Refused != "" {
		fmt.Fprintf(w, "refused: %s\n", v.Refused)
	}
	if v.Unreadable != "" {
		fmt.Fprintf(w, "registers not readable: %s\n", v.Unreadable)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "core type\tCPUs\tasked\tgovernor\tEPP (sysfs)\tregister\tmin\tmax\tdesired\tEPP\tEPB")
	for _, r := range v.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.CoreType, r.CPUs, asked(r.Asked),
			orDash(r.Governor), orDash(r.EPP), orDash(r.Register), optInt(r.Min), optInt(r.Max), optInt(r.Desired), optInt(r.RegEPP), optInt(r.EPB))
	}
	tw.Flush()
	for _, r := range v.Rows {
		for _, n := range r.Notes {
			fmt.Fprintf(w, "  %s (cpus %s): %s\n", r.CoreType, r.CPUs, n)
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// asked formats the asked settings in Keys order.
func asked(m map[Key]string) string {
	var parts []string
	for _, k := range Keys {
		if v, ok := m[k]; ok {
			parts = append(parts, string(k)+"="+v)
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ",")
}
