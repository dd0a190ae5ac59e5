// SPDX-License-Identifier: Apache-2.0

// Command render measures how long hwpprobe report's pages take to show
// in headless Chromium, for bench/report/run.sh: in one browser it opens a
// blank page (no script but the self-check's marker) and each page given,
// alternating, -n times each, and prints per page the time from
// navigation to the page's self-check (<html data-rendered>) and the
// time the page's script took to draw its charts, as the page's own
// clock measures them, with the median over the rounds:
//
//	render [-n 3] PAGE.html...
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/hwpprobe/hwpprobe/internal/browsertest"
)

// blank is the baseline: a page that only sets the marker.
const blank = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>blank</title></head><body><script>
window.hwpCheck = {charts: [], errors: [], ms: 0, loaded: performance.now()};
document.documentElement.setAttribute("data-rendered", "ok");
</script></body></html>`

func main() {
	n := flag.Int("n", 3, "rounds")
	flag.Parse()
	if flag.NArg() == 0 || *n < 1 {
		fmt.Fprintln(os.Stderr, "usage: render [-n 3] PAGE.html...")
		os.Exit(2)
	}
	if err := run(*n, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "render:", err)
		os.Exit(1)
	}
}

func run(n int, pages []string) error {
	dir, err := os.MkdirTemp("", "hwpprobe-render")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	b := filepath.Join(dir, "blank.html")
	if err := os.WriteFile(b, []byte(blank), 0o644); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	br, err := browsertest.Start(ctx, 1400, 1000)
	if err != nil {
		return err
	}
	defer br.Close()
	all := append([]string{b}, pages...)
	loads, draws := make([][]float64, len(all)), make([][]float64, len(all))
	for range n {
		for i, p := range all {
			res, err := br.Open(p, browsertest.Options{Timeout: 2 * time.Minute})
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			if res.Rendered != "ok" || len(res.Console) > 0 {
				return fmt.Errorf("%s: self-check %q, console %q", p, res.Rendered, res.Console)
			}
			loads[i], draws[i] = append(loads[i], res.LoadMs), append(draws[i], res.RenderMs)
		}
	}
	for i, p := range all {
		name := filepath.Base(p)
		size := int64(0)
		if st, err := os.Stat(p); err == nil {
			size = st.Size()
		}
		fmt.Printf("%-24s %10d bytes  to rendered %7.0f ms (median of %d: %s)  charts drawn in %7.0f ms\n",
			name, size, median(loads[i]), n, ms(loads[i]), median(draws[i]))
	}
	return nil
}

// median is the middle value, or the mean of the two middle ones.
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

func ms(v []float64) string {
	out := ""
	for i, x := range v {
		if i > 0 {
			out += " "
		}
		out += fmt.Sprintf("%.0f", x)
	}
	return out
}
