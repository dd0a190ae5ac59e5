// SPDX-License-Identifier: Apache-2.0

package recording

import (
	"bytes"
	"fmt"
	"unsafe"
)

// inflateRatio is how many bytes a reader may inflate and hold per byte
// of the file read, beyond budgetSlack (budget). Recordings inflate to at
// most 12 times their size (a snapshot's JSON compresses best), 25 with
// the JSON objects of format 1.0's samples counted.
const inflateRatio = 64

// budgetSlack is what a file may cost before its bytes count: room for a
// first records that compress better than inflateRatio (a small file's
// snapshot). A record that inflates to the payload limit must be stored in
// a quarter of the limit over inflateRatio, 192 KiB at 16 MiB.
const budgetSlack = 4 << 20

// budget bounds what a Reader inflates and holds across a whole file, not
// only per record (docs/recording-format.md, "Bounds on reading"): every
// zstd frame it inflates and every JSON object it decodes are charged,
// before the work is done, against budgetSlack plus inflateRatio times
// the bytes of the file read so far. A file of small records that each
// inflate to a large part of the payload limit is refused a few records
// in, as corrupt, instead of costing the limit once per record. A nil
// budget charges nothing.
type budget struct {
	read  int64 // bytes of the file read: its header and whole records
	spent int64 // bytes charged
}

// newBudget returns the budget of a file whose header was read.
func newBudget() *budget {
	return &budget{read: fileHeaderLen}
}

// charge spends n bytes on what, or fails, spending nothing, when that
// would take the file past its budget.
func (b *budget) charge(n int, what string) error {
	if b == nil {
		return nil
	}
	limit := budgetSlack + inflateRatio*b.read
	if b.spent+int64(n) > limit {
		return fmt.Errorf("%s of %d bytes: the file's records would inflate and hold %d bytes, more than %d plus %d times the %d bytes read (a zip bomb)",
			what, n, b.spent+int64(n), budgetSlack, inflateRatio, b.read)
	}
	b.spent += int64(n)
	return nil
}

// jsonObjectCost is what a reader charges for each JSON object of a
// payload: the most a decoded object takes beyond the bytes of its JSON
// (a CPU row decoded from "{}" takes a whole CPURow). The payload's bytes
// themselves are the file's, or were charged when inflated.
const jsonObjectCost = int(unsafe.Sizeof(CPURow{}))

// jsonCost is what decoding the JSON payload p may hold beyond its bytes:
// jsonObjectCost for each '{' (one per object, and any in strings).
func jsonCost(p []byte) int {
	return jsonObjectCost * bytes.Count(p, []byte{'{'})
}
