// SPDX-License-Identifier: Apache-2.0

package verdict

import (
	"bufio"
	"fmt"
	"io"
)

// WriteKTAP writes the cases as KTAP version 1 (docs/conform.md): the
// version line and the plan, then each case's diagnostic lines ("# ...")
// and its result line ("ok N name", "not ok N name", "ok N name # SKIP
// reason", or "# SKIP" alone without one); a parent's cases come first, indented two spaces, with their
// own version line, "# Subtest: name" and plan, as the kernel's KUnit
// writes them. A failed case's reason is a diagnostic line before its
// result.
func WriteKTAP(w io.Writer, cases []*Case) error {
	if err := checkNames(cases); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "KTAP version 1")
	fmt.Fprintf(bw, "1..%d\n", len(cases))
	for i, c := range cases {
		writeKTAPCase(bw, "", i+1, c)
	}
	return bw.Flush()
}

func writeKTAPCase(w *bufio.Writer, indent string, n int, c *Case) {
	if len(c.Cases) > 0 {
		in := indent + "  "
		fmt.Fprintf(w, "%sKTAP version 1\n%s# Subtest: %s\n%s1..%d\n", in, in, c.Name, in, len(c.Cases))
		for i, s := range c.Cases {
			writeKTAPCase(w, in, i+1, s)
		}
	}
	for _, d := range c.Diag {
		fmt.Fprintf(w, "%s# %s\n", indent, oneLine(d))
	}
	switch c.Outcome() {
	case Fail:
		if c.Reason != "" {
			fmt.Fprintf(w, "%s# %s: %s\n", indent, c.Name, oneLine(c.Reason))
		}
		fmt.Fprintf(w, "%snot ok %d %s\n", indent, n, c.Name)
	case Skip:
		fmt.Fprintf(w, "%sok %d %s # SKIP", indent, n, c.Name)
		if r := oneLine(c.skipReason()); r != "" {
			fmt.Fprintf(w, " %s", r)
		}
		fmt.Fprintln(w)
	default:
		fmt.Fprintf(w, "%sok %d %s\n", indent, n, c.Name)
	}
}
