// SPDX-License-Identifier: Apache-2.0

package analysis

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
	"github.com/hwpprobe/hwpprobe/internal/files/recording/summary"
)

// ErrIncomplete: a recording given to ReadSources is cut short or corrupt
// after some whole runs; those runs are read.
var ErrIncomplete = errors.New("recording is incomplete")

// scanParts are the parts of sample batches ReadSources decodes: the
// summary's (summary.Parts) and the scanner's (the CPU rows' registers
// and core types, the package rows' registers); not the CPU figures,
// which the analysis takes from the summary rows.
const scanParts = summary.Parts | recording.PartCPURegs | recording.PartCPUPlaces | recording.PartPackages

// ReadSources reads the recordings at paths, named by their base names,
// run by run and batch by batch (recording.ScanFile): what the analysis
// needs of each run's samples and trace events is gathered as they are
// read, and none of them is kept, so memory does not grow with the
// recordings' length.
// A file that cannot be read at all fails; a file cut short gives its
// whole records and an error wrapping ErrIncomplete next to the sources;
// a file that cannot be read gives nil sources and its error.
func ReadSources(paths []string) ([]Source, error) {
	var srcs []Source
	var incomplete error
	for _, p := range paths {
		var sc *scanner
		rec, err := recording.ScanFileParts(p, scanParts, func(r recording.Record) error {
			if m, ok := r.(recording.Meta); ok {
				sc = newScanner(m.Host)
			}
			return sc.add(r)
		})
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, Source{Name: filepath.Base(p), Rec: rec, scan: sc})
		switch {
		case incomplete != nil:
		case rec.Problem != nil:
			incomplete = fmt.Errorf("%w: %s: %v", ErrIncomplete, p, rec.Problem)
		case rec.End == nil:
			incomplete = fmt.Errorf("%w: %s ends without its end record (the writer stopped)", ErrIncomplete, p)
		}
	}
	return srcs, incomplete
}
