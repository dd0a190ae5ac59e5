package export

import (
	"os"

	"github.com/hwpprobe/hwpprobe/recording"
)

// rowSink writes the rows of sample batches in some format.
type rowSink interface {
	// samples writes the rows of samples of the run that start began,
	// whose figures are in the columns cpuCols and pkgCols.
	samples(start recording.RunStart, cpuCols, pkgCols []string, samples []recording.Sample)
	// failed returns the first error met writing, which stops the scan.
	failed() error
	// close writes what is left and ends the output.
	close() error
}

// scanTwice exports the recording at path through the sink open returns
// for its layout: it reads the file twice batch by batch
// (recording.ScanFile: the columns, then the rows), so that memory does
// not grow with the recording. A path that is not a regular file (a pipe)
// is read whole, once, and handed to whole. It returns the recording read
// (without samples), whose Issue says what was lost.
func scanTwice(path string, open func(*layout) rowSink, whole func(*recording.Recording) error) (*recording.Recording, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		rec, err := recording.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return rec, whole(rec)
	}
	var l layout
	// The first scan needs the registers alone: the CPU rows' as columns.
	first, err := recording.ScanFileParts(path, recording.PartCPURegColumns|recording.PartPackages, func(r recording.Record) error {
		if b, ok := r.(recording.Samples); ok {
			l.addBatch(b)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sink := open(l.columns(first.Runs))
	starts := map[int]recording.RunStart{}
	for _, run := range first.Runs {
		starts[run.Start.Run] = run.Start
	}
	rec, err := recording.ScanFile(path, func(r recording.Record) error {
		if b, ok := r.(recording.Samples); ok {
			sink.samples(starts[b.Run], b.CPUColumns, b.PackageColumns, b.Samples)
		}
		return sink.failed()
	})
	if err != nil {
		return nil, err
	}
	return rec, sink.close()
}
