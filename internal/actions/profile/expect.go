// SPDX-License-Identifier: Apache-2.0

package profile

import (
	"fmt"
	"io"

	"github.com/hwpprobe/hwpprobe/internal/cli"
)

// ExpectError prints the lines where matrix's table differs from the
// --expect file, three lines each on stderr (each through cli.OneLine:
// the file may hold anything), and returns the one-line error for them;
// nil when none differs.
func ExpectError(stderr io.Writer, expect string, diffs []MatrixLine) error {
	if len(diffs) == 0 {
		return nil
	}
	for _, d := range diffs {
		fmt.Fprintf(stderr, "line %d:\n  want: %s\n  got:  %s\n", d.N, cli.OneLine(d.Want), cli.OneLine(d.Got))
	}
	return fmt.Errorf("matrix: %w in %s (%d lines, above)", ErrMismatch, expect, len(diffs))
}
