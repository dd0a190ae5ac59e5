// SPDX-License-Identifier: Apache-2.0

package experiment

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hwpprobe/hwpprobe/internal/termscreen"
)

// fakeClock is the progress's clock in the tests: emulated time, moved by
// hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time      { return c.t }
func (c *fakeClock) add(d time.Duration) { c.t = c.t.Add(d) }
func (c *fakeClock) addS(s float64)      { c.add(time.Duration(s * float64(time.Second))) }
func testProgress(live bool, planned int, auto bool, overhead time.Duration) (*progress, *bytes.Buffer, *fakeClock) {
	var b bytes.Buffer
	c := &fakeClock{t: time.Unix(1e9, 0)}
	p := makeProgress(&b, live, planned, auto, overhead)
	p.width, p.now = func() int { return 200 }, c.now
	return p, &b, c
}

// step runs one slot: before seconds of settings and cool-down, then a run
// of secs.
func step(p *progress, c *fakeClock, id int, s Slot, before, secs float64) {
	p.begin(id, s)
	c.addS(before)
	p.running()
	c.addS(secs)
	p.end(secs, 0)
}

// TestProgressPlain: off a terminal, one line per run; the time left is
// the median run time and the median time before a run (settings,
// prepare, cool-down) for each slot still to come.
func TestProgressPlain(t *testing.T) {
	p, b, c := testProgress(false, 4, false, 5*time.Second)
	step(p, c, 1, Slot{0, true}, 2, 10)
	step(p, c, 2, Slot{1, true}, 4, 20)
	p.Write([]byte("a warning\n"))
	step(p, c, 3, Slot{Side: 0}, 3, 100)
	step(p, c, 4, Slot{Side: 1}, 3, 30)
	p.close()
	want := "hwpprobe: run 1 of 4: side A (warm-up): 10.000 s, status 0, 36 s left\n" + // 3 x (2 + 10)
		"hwpprobe: run 2 of 4: side B (warm-up): 20.000 s, status 0, 36 s left\n" + // 2 x (3 + 15)
		"a warning\n" +
		"hwpprobe: run 3 of 4: side A: 100.000 s, status 0, 23 s left\n" + // 1 x (3 + 20)
		"hwpprobe: run 4 of 4: side B: 30.000 s, status 0\n"
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("plain progress (-want +got):\n%s", d)
	}
}

// TestProgressLive: on a terminal the line is drawn over itself (carriage
// return, erase to the end of the line), cleared before other output and
// drawn again under it once that output ends its line, and cleared at the
// end: the screen keeps the other output alone.
func TestProgressLive(t *testing.T) {
	p, b, c := testProgress(true, 4, false, 5*time.Second)
	p.begin(1, Slot{0, true})
	if got, want := b.String(), clearLine+"hwpprobe: run 1 of 4: side A (warm-up), applying 0 s"; got != want {
		t.Errorf("first draw %q, want %q", got, want)
	}
	c.addS(2)
	p.running()
	c.addS(4)
	b.Reset()
	p.Write([]byte("CC kernel/fork.o\n"))
	if got, want := b.String(), clearLine+"CC kernel/fork.o\n"+clearLine+"hwpprobe: run 1 of 4: side A (warm-up), running 4 s"; got != want {
		t.Errorf("output under the line %q, want %q", got, want)
	}
	b.Reset()
	p.Write([]byte("half a line"))
	p.redraw() // a tick: nothing is drawn into a line the workload has not ended
	c.addS(6)
	p.end(10, 0)
	if got, want := b.String(), clearLine+"half a line"; got != want {
		t.Errorf("partial output %q, want %q", got, want)
	}
	p.Write([]byte(", ended\n"))
	step(p, c, 2, Slot{1, true}, 4, 20)
	if got, want := termscreen.Lines(b.String()), []string{"half a line, ended",
		"hwpprobe: run 2 of 4: side B (warm-up), ended | last A 10.00 s, B 20.00 s | ETA 36 s"}; !cmp.Equal(got, want) {
		t.Errorf("screen %q, want %q", got, want)
	}
	p.begin(3, Slot{Side: 0})
	c.addS(1)
	if got, want := p.line(), "hwpprobe: run 3 of 4: side A, applying 1 s | last A 10.00 s, B 20.00 s | ETA 35 s"; got != want {
		t.Errorf("before the run: %q, want %q", got, want) // (3 - 1) + 15 for run 3, 3 + 15 for run 4
	}
	p.running()
	c.addS(40)
	if got, want := p.line(), "hwpprobe: run 3 of 4: side A, running 40 s | last A 10.00 s, B 20.00 s | ETA 17 s"; got != want {
		t.Errorf("overrunning: %q, want %q", got, want) // run 3 past the median: 0, then run 4: median(2, 4, 1) + 15
	}
	p.close()
	screen := termscreen.Lines(b.String())
	if d := cmp.Diff([]string{"half a line, ended", ""}, screen); d != "" {
		t.Errorf("screen after close (-want +got):\n%s", d)
	}
	if n := strings.Count(b.String(), clearLine); n < 8 {
		t.Errorf("%d redraws and clears, want at least 8", n)
	}
	b.Reset()
	p.Write([]byte("restore: every setting is back\n"))
	if got := b.String(); got != "restore: every setting is back\n" {
		t.Errorf("after close %q, want the output alone", got)
	}
}

// TestProgressLiveNarrow: the line is cut to the terminal's width less
// one column, so it never wraps (a wrapped line cannot be redrawn with a
// carriage return).
func TestProgressLiveNarrow(t *testing.T) {
	p, b, _ := testProgress(true, 10, false, 0)
	p.width = func() int { return 20 }
	p.begin(1, Slot{Side: 1})
	if got, want := b.String(), clearLine+"hwpprobe: run 1 of "; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// TestProgressAuto: an adaptive schedule's count and ETA are bounds.
func TestProgressAuto(t *testing.T) {
	p, _, c := testProgress(true, 12, true, 0)
	step(p, c, 1, Slot{Side: 0}, 0, 10)
	if got, want := p.line(), "hwpprobe: run 1 of at most 12: side A, ended | last A 10.00 s | ETA at most 1m50s"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

func TestFmtDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "0 s", 59499 * time.Millisecond: "59 s", 61 * time.Second: "1m01s",
		3599 * time.Second: "59m59s", 3720 * time.Second: "1h02m"} {
		if got := fmtDuration(d); got != want {
			t.Errorf("fmtDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
