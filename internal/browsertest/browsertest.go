// SPDX-License-Identifier: Apache-2.0

// Package browsertest opens hwpprobe's HTML pages (package
// report/htmlreport) in headless Chromium through the DevTools protocol
// (github.com/chromedp/chromedp), for the tests and the benchmark: it
// collects the console's errors and the page's uncaught exceptions, waits
// (bounded) for the page's self-check (the <html data-rendered> attribute
// and window.hwpCheck that assets/page.js sets once every chart is drawn),
// and takes a screenshot.
package browsertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// ErrNoChromium: no Chromium binary was found.
var ErrNoChromium = errors.New("no chromium found (install Debian's chromium: scripts/install-deps.sh; or set CHROMIUM)")

// Chromium returns the browser's path: $CHROMIUM, else the first of
// chromium, chromium-browser, google-chrome on PATH.
func Chromium() (string, error) {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoChromium
}

// Chart is one chart's self-check: its coloured pixels in the plot area.
type Chart struct {
	ID     string  `json:"id"`
	Title  string  `json:"title"`
	Pixels int     `json:"pixels"`
	Width  float64 `json:"width"`
	// ExpectEmpty: the page says the chart has nothing to draw (a run
	// without register writes) and writes why in its plot area.
	ExpectEmpty bool `json:"expectEmpty"`
}

// Result is what opening a page found.
type Result struct {
	// Console holds the console's errors and warnings, uncaught
	// exceptions and the browser's own error entries (a failed load).
	Console []string
	// Rendered is <html data-rendered>: "ok", or "error" when a chart
	// failed or drew nothing.
	Rendered string
	Charts   []Chart
	// Errors are the errors the page's own script caught.
	Errors []string
	// RenderMs is the page script's time from its start to the
	// self-check; LoadMs is navigation start to the self-check, as the
	// page's performance clock measures both.
	RenderMs, LoadMs float64
	Screenshot       []byte // PNG of the whole page; nil unless asked
	Evals            [][]byte
}

// Options say how to open a page.
type Options struct {
	Timeout    time.Duration // for the whole page; 0: one minute
	Screenshot bool
	// Dark asks for prefers-color-scheme: dark.
	Dark bool
	// Eval are JavaScript expressions evaluated in order once the page's
	// self-check is done; their values (a promise's, once it settles), as
	// JSON, go to Result.Evals.
	Eval []string
}

// Browser is a headless Chromium that opens pages one tab at a time.
type Browser struct {
	ctx    context.Context // the browser's first tab
	cancel func()
}

// Start starts a headless Chromium (--headless --no-sandbox --disable-gpu)
// with a window of width x height (0: 1400 x 1000). It ends with ctx or
// Close.
func Start(ctx context.Context, width, height int) (*Browser, error) {
	exe, err := Chromium()
	if err != nil {
		return nil, err
	}
	if width == 0 {
		width, height = 1400, 1000
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Headless, chromedp.WindowSize(width, height))
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	tctx, tcancel := chromedp.NewContext(actx)
	b := &Browser{ctx: tctx, cancel: func() { tcancel(); acancel() }}
	if err := chromedp.Do(tctx); err != nil {
		b.Close()
		return nil, fmt.Errorf("start %s: %w", exe, err)
	}
	return b, nil
}

// Close ends the browser.
func (b *Browser) Close() { b.cancel() }

// Open loads the file at path in a new tab and waits (at most
// o.Timeout) for the page's self-check.
func (b *Browser) Open(path string, o Options) (*Result, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if o.Timeout == 0 {
		o.Timeout = time.Minute
	}
	tab, cancel := chromedp.NewContext(b.ctx)
	defer cancel()
	tctx, tcancel := context.WithTimeout(tab, o.Timeout)
	defer tcancel()
	if err := chromedp.Do(tctx); err != nil { // opens the tab
		return nil, fmt.Errorf("open a tab: %w", err)
	}
	if o.Dark {
		dark := emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}
		if _, err := chromedp.Call(tctx, emulation.SetEmulatedMedia, dark); err != nil {
			return nil, fmt.Errorf("dark mode: %w", err)
		}
	}
	var msgs collector
	mctx, mcancel := context.WithCancel(tctx)
	done := msgs.start(mctx)
	res, err := load(tctx, "file://"+abs, o)
	mcancel()
	<-done
	if res != nil {
		res.Console = msgs.get()
	}
	return res, err
}

// load navigates to url, waits for the self-check and reads it.
func load(ctx context.Context, url string, o Options) (*Result, error) {
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		return nil, fmt.Errorf("load %s: %w", url, err)
	}
	rendered, err := chromedp.Run(ctx, chromedp.Poll[string](`document.documentElement.getAttribute("data-rendered")`,
		chromedp.WithPollingTimeout(o.Timeout), chromedp.WithPollingInterval(20*time.Millisecond)))
	if err != nil {
		return nil, fmt.Errorf("wait for the page's self-check: %w", err)
	}
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](`window.hwpCheck || null`))
	if err != nil {
		return nil, fmt.Errorf("read the page's self-check: %w", err)
	}
	var check struct {
		Charts []Chart  `json:"charts"`
		Errors []string `json:"errors"`
		Ms     float64  `json:"ms"`
		Loaded float64  `json:"loaded"`
	}
	if err := json.Unmarshal(raw, &check); err != nil {
		return nil, fmt.Errorf("decode the page's self-check %s: %w", raw, err)
	}
	res := &Result{Rendered: rendered, Charts: check.Charts, Errors: check.Errors, RenderMs: check.Ms, LoadMs: check.Loaded}
	for _, js := range o.Eval {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](js, chromedp.EvalAwaitPromise))
		if err != nil {
			return res, fmt.Errorf("evaluate %q: %w", js, err)
		}
		res.Evals = append(res.Evals, v)
	}
	if o.Screenshot {
		if res.Screenshot, err = chromedp.Run(ctx, chromedp.FullScreenshot(100)); err != nil {
			return res, fmt.Errorf("screenshot: %w", err)
		}
	}
	return res, nil
}

// collector gathers the console's errors and warnings while a page runs.
type collector struct {
	mu   sync.Mutex
	msgs []string
}

func (c *collector) start(ctx context.Context) <-chan struct{} {
	messages := chromedp.Console(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			switch m.Type {
			case chromedp.ConsoleError, chromedp.ConsoleException, chromedp.ConsoleWarning:
				c.mu.Lock()
				c.msgs = append(c.msgs, fmt.Sprintf("%s: %s (%s:%d)", m.Type, m.Text, m.URL, m.Line+1))
				c.mu.Unlock()
			}
		}
	}()
	return done
}

func (c *collector) get() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.msgs...)
}
