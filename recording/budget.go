package recording

import (
	"bytes"
	"fmt"
	"unsafe"
)

// inflateRatio is how many bytes a reader may inflate and hold per byte
// of the file read, beyond one payload's limit (budget). Recordings
// inflate to at most 12 times their size (a snapshot's JSON compresses
// best), and hold less once decoded.
const inflateRatio = 64

// budget bounds what a Reader inflates and holds across a whole file, not
// only per record (docs/recording-format.md, "Bounds on reading"): every
// zstd frame it inflates, every JSON object it decodes and every row and
// cell of a batch it keeps are charged, before the work is done, against
// the version's payload limit plus inflateRatio times the bytes of the
// file read so far. A file of small records that each inflate to the
// payload limit is refused a few records in, as corrupt, instead of
// costing the limit once per record. A nil budget charges nothing.
type budget struct {
	read  int64 // bytes of the file read: its header and whole records
	spent int64 // bytes charged
	slack int64 // what the file may cost before its first byte counts
}

// newBudget returns the budget of a file of version v whose header was read.
func newBudget(v Version) *budget {
	return &budget{read: fileHeaderLen, slack: int64(v.maxPayload())}
}

// charge spends n bytes on what, or fails, spending nothing, when that
// would take the file past its budget.
func (b *budget) charge(n int, what string) error {
	if b == nil {
		return nil
	}
	limit := b.slack + inflateRatio*b.read
	if b.spent+int64(n) > limit {
		return fmt.Errorf("%s of %d bytes: the file's records would inflate and hold %d bytes, more than %d plus %d times the %d bytes read (a zip bomb)",
			what, n, b.spent+int64(n), b.slack, inflateRatio, b.read)
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

// Sizes of the rows a batch kept in memory (Read) holds, and of a cell:
// a figure (Value) or a register (Reg, the larger).
const (
	sampleSize  = int(unsafe.Sizeof(Sample{}))
	cpuRowSize  = int(unsafe.Sizeof(CPURow{}))
	pkgRowSize  = int(unsafe.Sizeof(PackageRow{}))
	sumRowSize  = int(unsafe.Sizeof(SummaryRow{}))
	eventSize   = int(unsafe.Sizeof(TraceEvent{}))
	maxCellSize = int(unsafe.Sizeof(Reg{}))
)
