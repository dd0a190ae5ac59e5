// SPDX-License-Identifier: Apache-2.0

package synth

import (
	"bytes"
	"testing"

	"github.com/hwpprobe/hwpprobe/internal/files/recording"
)

// TestWrite: a generated recording reads back whole, with every sample,
// CPU row and trace event asked for, and figures that vary.
func TestWrite(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, Config{CPUs: 14, Hz: 10, Seconds: 3, Seed: 1, TracePerSecond: 5}); err != nil {
		t.Fatal(err)
	}
	rec, err := recording.Read(&buf)
	if err != nil || !rec.Complete() || len(rec.Runs) != 1 {
		t.Fatalf("err %v, complete %v", err, rec.Complete())
	}
	r := rec.Runs[0]
	if len(r.Samples) != 30 || len(r.Samples[0].CPUs) != 14 || len(r.Trace) != 15 {
		t.Fatalf("%d samples, %d CPU rows, %d events", len(r.Samples), len(r.Samples[0].CPUs), len(r.Trace))
	}
	seen := map[recording.Value]bool{}
	for _, s := range r.Samples {
		for _, c := range s.CPUs {
			seen[c.Value(r.Column("Avg_MHz"))] = true
		}
	}
	if len(seen) < 400 {
		t.Errorf("%d distinct Avg_MHz values in 420 rows", len(seen))
	}
}
