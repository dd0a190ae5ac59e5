// SPDX-License-Identifier: Apache-2.0

package experiment

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/cli"
)

// Terminal control sequences of the live line: carriage return, then
// erase to the end of the line (ECMA-48 EL 0).
const (
	clearLine = "\r\x1b[K"
	// redrawEvery is how often the live line's clocks move.
	redrawEvery = 500 * time.Millisecond
)

// progress reports an experiment's runs on a stream (diff's stderr). On a
// terminal it keeps one live line at the bottom (run i of N, side, phase
// and its clock, the last run's time per side, the ETA), redrawn in place
// and cleared before any other output, which is written through it, and
// at the end. Elsewhere it writes one plain line per run. Its methods are
// safe for concurrent use.
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	live    bool
	width   func() int
	now     func() time.Time
	planned int  // slots in the schedule (Auto: at most)
	auto    bool // planned is a bound
	// overhead is the time before a run (applying, prepare, cool-down)
	// assumed until one has been measured.
	overhead time.Duration

	id      int
	slot    Slot
	phase   string
	begun   time.Time           // the slot began (before its settings)
	started time.Time           // its command started; zero before
	runs    [MaxSides][]float64 // seconds of every ended run, per side
	before  []float64           // seconds from each slot's start to its run's

	drawn  bool // the live line is on the screen
	bol    bool // the other output ended a line (or there was none)
	closed bool

	stop    chan struct{}
	ticked  sync.WaitGroup
	pipeW   *os.File      // live: the workload's output goes here
	drained chan struct{} // closed when the pipe's reader ends
}

// newProgress returns the progress of a schedule of planned slots on w:
// live when w is a terminal (and TERM is not "dumb"). overhead is the
// expected time before each run (the fixed cool-down).
func newProgress(w io.Writer, planned int, auto bool, overhead time.Duration) *progress {
	p := makeProgress(w, cli.CanRedraw(w), planned, auto, overhead)
	p.width = func() int { return cli.TermWidth(w) }
	if p.live {
		p.ticked.Add(1)
		go p.tick()
	}
	return p
}

// makeProgress is newProgress without the terminal: live as told, 80
// columns wide, and no ticker (the line is drawn on events alone).
func makeProgress(w io.Writer, live bool, planned int, auto bool, overhead time.Duration) *progress {
	p := &progress{w: w, live: live, width: func() int { return 80 }, now: time.Now,
		planned: planned, auto: auto, overhead: overhead, bol: true}
	if live {
		p.stop = make(chan struct{})
	}
	return p
}

func (p *progress) tick() {
	defer p.ticked.Done()
	t := time.NewTicker(redrawEvery)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			p.redraw()
			p.mu.Unlock()
		}
	}
}

// Write writes other output (warnings, the workload's output, the
// restore's report): on a terminal the live line is cleared first and
// drawn again below it once the output ends a line.
func (p *progress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.live || p.closed {
		return p.w.Write(b)
	}
	p.clear()
	n, err := p.w.Write(b)
	if n > 0 {
		p.bol = b[n-1] == '\n'
	}
	p.redraw()
	return n, err
}

// output returns the writer for the workload's stream w: on a live
// terminal, when w is that terminal, a pipe whose output passes through
// Write (the workload then does not write on a terminal), else w.
func (p *progress) output(w io.Writer) io.Writer {
	if !p.live || !sameFile(w, p.w) {
		return w
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pipeW == nil {
		r, pw, err := os.Pipe()
		if err != nil {
			return w
		}
		p.pipeW, p.drained = pw, make(chan struct{})
		go p.copyPipe(r)
	}
	return p.pipeW
}

func (p *progress) copyPipe(r *os.File) {
	defer close(p.drained)
	defer r.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			p.Write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

func sameFile(a, b io.Writer) bool {
	fa, ok1 := a.(*os.File)
	fb, ok2 := b.(*os.File)
	if !ok1 || !ok2 {
		return false
	}
	sa, err1 := fa.Stat()
	sb, err2 := fb.Stat()
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// begin starts slot s, run id of the schedule.
func (p *progress) begin(id int, s Slot) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.id, p.slot, p.phase, p.begun, p.started = id, s, "applying", p.now(), time.Time{}
	p.redraw()
}

// setPhase names what the slot does before its run: "prepare",
// "cool-down".
func (p *progress) setPhase(phase string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.phase = phase
	p.redraw()
}

// running says the slot's command starts now.
func (p *progress) running() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.phase, p.started = "running", p.now()
	p.before = append(p.before, p.started.Sub(p.begun).Seconds())
	p.redraw()
}

// end says the run ended after secs with the shell status code.
func (p *progress) end(secs float64, code int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.runs[p.slot.Side] = append(p.runs[p.slot.Side], secs)
	p.phase = "ended"
	if p.live {
		p.redraw()
		return
	}
	eta := ""
	if d, ok := p.eta(); ok && p.id < p.planned {
		eta = fmt.Sprintf(", %s left", p.bound()+fmtDuration(d))
	}
	fmt.Fprintf(p.w, "hwpprobe: run %d of %s: side %s%s: %.3f s, status %d%s\n",
		p.id, p.of(), label(p.slot.Side), p.kind(), secs, code, eta)
}

// close clears the live line and stops drawing it; the workload's output
// still in the pipe (at most a second's wait for it) is written first.
func (p *progress) close() {
	if !p.live {
		return
	}
	p.mu.Lock()
	pw, drained := p.pipeW, p.drained
	p.pipeW = nil
	p.mu.Unlock()
	if pw != nil {
		pw.Close()
		select {
		case <-drained:
		case <-time.After(time.Second): // a process of the workload holds it
		}
	}
	close(p.stop)
	p.ticked.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	p.closed = true
}

func (p *progress) clear() {
	if p.drawn {
		io.WriteString(p.w, clearLine)
		p.drawn = false
	}
}

// redraw draws the live line over itself, when the other output has
// ended its line and a slot has begun.
func (p *progress) redraw() {
	if !p.live || p.closed || !p.bol || p.id == 0 {
		return
	}
	line := p.line()
	if w := p.width() - 1; len(line) > w {
		line = line[:max(w, 0)]
	}
	io.WriteString(p.w, clearLine+line)
	p.drawn = true
}

// line is the live line: "run 3 of 10: side B (warm-up), running 12 s |
// last A 45.21 s, B 44.90 s | ETA 6m12s".
func (p *progress) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "hwpprobe: run %d of %s: side %s%s, %s", p.id, p.of(), label(p.slot.Side), p.kind(), p.phase)
	switch {
	case p.phase == "running":
		fmt.Fprintf(&b, " %s", fmtDuration(p.now().Sub(p.started)))
	case p.phase != "ended":
		fmt.Fprintf(&b, " %s", fmtDuration(p.now().Sub(p.begun)))
	}
	var last []string
	for i, r := range p.runs {
		if len(r) > 0 {
			last = append(last, fmt.Sprintf("%s %.2f s", label(i), r[len(r)-1]))
		}
	}
	if len(last) > 0 {
		fmt.Fprintf(&b, " | last %s", strings.Join(last, ", "))
	}
	if d, ok := p.eta(); ok {
		fmt.Fprintf(&b, " | ETA %s%s", p.bound(), fmtDuration(d))
	}
	return b.String()
}

func (p *progress) of() string {
	if p.auto {
		return fmt.Sprintf("at most %d", p.planned)
	}
	return fmt.Sprint(p.planned)
}

func (p *progress) bound() string {
	if p.auto {
		return "at most "
	}
	return ""
}

func (p *progress) kind() string {
	if p.slot.Warmup {
		return " (warm-up)"
	}
	return ""
}

// eta is the time the rest of the schedule should take: the median run
// time for the current run (less the time it has run) and for each slot
// after it, plus the time before each of those runs (the median measured
// one: settings, prepare, cool-down; until one is measured, the fixed
// cool-down). ok is false before a run has ended.
func (p *progress) eta() (time.Duration, bool) {
	runs := slices.Concat(p.runs[:]...)
	if len(runs) == 0 {
		return 0, false
	}
	run := median(runs)
	before := p.overhead.Seconds()
	if len(p.before) > 0 {
		before = median(p.before)
	}
	now := p.now()
	var left float64
	switch p.phase {
	case "running":
		left = max(run-now.Sub(p.started).Seconds(), 0)
	case "ended":
	default:
		left = max(before-now.Sub(p.begun).Seconds(), 0) + run
	}
	left += float64(max(p.planned-p.id, 0)) * (before + run)
	return time.Duration(left * float64(time.Second)), true
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// fmtDuration writes d to the second ("45 s", "6m12s", "1h02m").
func fmtDuration(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}
